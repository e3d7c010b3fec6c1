/** Exit codes a script can branch on; documented in the README and in `--help`. */
export const exitCodes = {
  ok: 0,
  /** The API answered with an error, or the operation failed (e.g. drain --wait timed out). */
  failed: 1,
  /** Unknown command or flag, missing or malformed arguments. */
  usage: 2,
  /** The API cannot be reached, or there are no usable credentials (no address, no token, 401). */
  unreachable: 3,
} as const;

export type ExitCode = (typeof exitCodes)[keyof typeof exitCodes];

/** The command line is wrong; `command` picks which usage line to print. */
export class UsageError extends Error {
  readonly command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
    this.name = 'UsageError';
    this.command = command;
  }
}

/** The API is out of reach, or the caller has no credentials it would accept. */
export class UnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreachableError';
  }
}

/** Something other than the command line failed: a local file, a wait that timed out. */
export class OperationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OperationError';
  }
}

/** RFC 9457 problem details as the jobrelay API sends them (application/problem+json). */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  code?: string;
  instance?: string;
  reason?: string;
  errors?: Array<{ path?: string; message?: string }>;
  missingPermission?: {
    verb?: string;
    group?: string;
    resource?: string;
    subresource?: string;
    namespace?: string;
    name?: string;
    nonResourceURL?: string;
  };
}

/** An HTTP error answer of the API; `problem` is absent when the body was not problem+json. */
export class ApiError extends Error {
  readonly status: number;
  readonly problem: Problem | undefined;
  constructor(status: number, statusText: string, problem: Problem | undefined) {
    super(problem?.detail ?? problem?.title ?? `the API answered ${status} ${statusText}`.trim());
    this.name = 'ApiError';
    this.status = status;
    this.problem = problem;
  }
}
