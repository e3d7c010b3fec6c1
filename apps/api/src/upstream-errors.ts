import { describeApiError, isAlreadyExists, statusCodeOf } from '@jobrelay/kube';
import { ApiProblem } from './problems.ts';

/** client-node's ApiException carries the HTTP status in `code` and the Status object in `body`. */
function isKubernetesApiError(err: unknown): boolean {
  return statusCodeOf(err) !== undefined && (err as { body?: unknown }).body !== undefined;
}

/**
 * A failed call the API made with its own identity, as a problem for the caller: the
 * apiserver's message (never the request, which can carry a kubeconfig), and a status that
 * says whose fault it is.
 */
export function upstreamProblem(err: unknown): ApiProblem | undefined {
  if (!isKubernetesApiError(err)) return undefined;
  const status = statusCodeOf(err)!;
  const detail = describeApiError(err);
  if (isAlreadyExists(err)) return new ApiProblem('already-exists', detail);
  if (status === 409) return new ApiProblem('conflict', `${detail}; read it again and retry`);
  if (status === 404) return new ApiProblem('not-found', detail);
  if (status === 422 || status === 400) return new ApiProblem('validation-failed', detail);
  if (status === 401 || status === 403) {
    // The caller passed our review; the API's own identity lacks a right: an install problem.
    return new ApiProblem(
      'upstream-error',
      `the API's own identity was refused by the management cluster (${detail}); apply deploy/api's RBAC`,
    );
  }
  if (status === 429 || status >= 500) {
    return new ApiProblem(
      'unavailable',
      `the management apiserver could not answer: ${detail}`,
      {},
      { 'retry-after': '2' },
    );
  }
  return new ApiProblem('upstream-error', detail);
}
