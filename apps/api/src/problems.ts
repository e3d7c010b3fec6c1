import type { Problem } from '@jobrelay/api-types';

/** Stable problem codes: `type` is `${problemTypeBase}<code>`; clients and the plugin match on `code`. */
export const problemCodes = {
  unauthenticated: 401,
  forbidden: 403,
  'not-found': 404,
  'validation-failed': 400,
  'bad-request': 400,
  'method-not-allowed': 405,
  'request-timeout': 408,
  'payload-too-large': 413,
  'headers-too-large': 431,
  'unsupported-media-type': 415,
  conflict: 409,
  'already-exists': 409,
  'cluster-has-workloads': 409,
  'kubeconfig-refused': 422,
  'unsupported-kind': 422,
  'rate-limited': 429,
  'too-many-streams': 429,
  'stream-expired': 408,
  'slow-reader': 408,
  unavailable: 503,
  'upstream-error': 502,
  internal: 500,
} as const;

export type ProblemCode = keyof typeof problemCodes;

export const problemTypeBase = 'https://jobrelay.dev/problems/';

export { permissionSchema, problemSchema } from '@jobrelay/api-types';
export type { Problem };

const titles: Record<ProblemCode, string> = {
  unauthenticated: 'Unauthenticated',
  forbidden: 'Forbidden',
  'not-found': 'Not found',
  'validation-failed': 'Validation failed',
  'bad-request': 'Bad request',
  'method-not-allowed': 'Method not allowed',
  'request-timeout': 'Request timeout',
  'payload-too-large': 'Payload too large',
  'headers-too-large': 'Request header fields too large',
  'unsupported-media-type': 'Unsupported media type',
  conflict: 'Conflict',
  'already-exists': 'Already exists',
  'cluster-has-workloads': 'The cluster still has workloads',
  'kubeconfig-refused': 'Kubeconfig refused',
  'unsupported-kind': 'Kind not dispatched',
  'rate-limited': 'Too many requests',
  'too-many-streams': 'Too many open streams',
  'stream-expired': 'Stream lifetime reached',
  'slow-reader': 'Reader too slow',
  unavailable: 'Service unavailable',
  'upstream-error': 'Kubernetes API error',
  internal: 'Internal error',
};

/** Thrown by handlers; the error handler renders it as application/problem+json. */
export class ApiProblem extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly extra: Partial<Pick<Problem, 'errors' | 'missingPermission' | 'reason'>>;
  readonly headers: Record<string, string>;

  constructor(
    code: ProblemCode,
    detail: string,
    extra: ApiProblem['extra'] = {},
    headers: Record<string, string> = {},
  ) {
    super(detail);
    this.code = code;
    this.status = problemCodes[code];
    this.extra = extra;
    this.headers = headers;
  }

  toProblem(instance: string | undefined): Problem {
    return {
      type: `${problemTypeBase}${this.code}`,
      title: titles[this.code],
      status: this.status,
      detail: this.message,
      code: this.code,
      ...(instance ? { instance } : {}),
      ...this.extra,
    };
  }
}

export const problemContentType = 'application/problem+json';
