import { statusCodeOf, TimeoutError } from '@jobrelay/kube';
import { ServerAddressDeniedError } from './server-address-deny-list.ts';
import { type ActiveReason, activeReasons } from './worker-cluster.ts';

const tlsErrorCodes = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_SIGNATURE_FAILURE',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

/** The error and its causes, at most five deep. */
function causeChain(err: unknown): unknown[] {
  const chain: unknown[] = [];
  let current: unknown = err;
  for (let depth = 0; current && depth < 5; depth++) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

function causeCodes(err: unknown): string[] {
  return causeChain(err).flatMap((cause) => {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' ? [code] : [];
  });
}

/**
 * Turns a failed call to a worker into an Active reason and a message an admin can act on.
 * The message names the server and the failure, never the request's credentials.
 */
export function classifyConnectionError(
  err: unknown,
  server: string,
): { reason: ActiveReason; message: string } {
  const status = statusCodeOf(err);
  if (status === 401) {
    return {
      reason: activeReasons.unauthorized,
      message: `${server} rejected the kubeconfig's credentials (HTTP 401): renew the token or certificate in the Secret`,
    };
  }
  if (status === 403) {
    return {
      reason: activeReasons.forbidden,
      message: `${server} denied a connection check (HTTP 403): grant the kubeconfig's identity the jobrelay-worker ClusterRole`,
    };
  }
  if (status !== undefined) {
    return {
      reason: activeReasons.unreachable,
      message: `${server} answered HTTP ${status} to a health check`,
    };
  }
  if (err instanceof TimeoutError)
    return { reason: activeReasons.unreachable, message: `${server}: ${err.message}` };
  const denied = causeChain(err).find((cause) => cause instanceof ServerAddressDeniedError);
  if (denied) {
    return {
      reason: activeReasons.kubeconfigUnsafe,
      message: `the server ${server} was not contacted: ${denied.message} (--restrict-server-addresses)`,
    };
  }
  const codes = causeCodes(err);
  const tls = codes.find((code) => tlsErrorCodes.has(code));
  if (tls) {
    const hint =
      tls === 'CERT_HAS_EXPIRED'
        ? 'a certificate has expired'
        : 'the server certificate does not verify against certificate-authority-data';
    return { reason: activeReasons.tlsError, message: `TLS to ${server} failed (${tls}): ${hint}` };
  }
  const network = codes.find((code) => code.startsWith('E') || code.startsWith('UND_ERR'));
  return {
    reason: activeReasons.unreachable,
    message: `cannot reach ${server}${network ? ` (${network})` : ''}: check the address and that the apiserver is up`,
  };
}
