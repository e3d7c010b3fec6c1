import { X509Certificate } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { type ActiveReason, activeReasons } from './worker-cluster.ts';

export type KubeconfigLoad =
  | { ok: true; kubeConfig: KubeConfig; server: string }
  | { ok: false; reason: ActiveReason; message: string };

interface RawKubeconfig {
  clusters?: Array<{ name?: string; cluster?: Record<string, unknown> }>;
  users?: Array<{ name?: string; user?: Record<string, unknown> }>;
  contexts?: Array<{ name?: string; context?: { cluster?: string; user?: string } }>;
  'current-context'?: string;
}

/**
 * User fields that make the controller run programs or read its own files on behalf of
 * whoever can write a Secret in jobrelay-system: refused.
 */
const unsafeUserFields: Record<string, string> = {
  exec: 'an exec credential plugin would run a program inside the controller',
  'auth-provider': 'auth-provider plugins run code and are deprecated',
  tokenFile: 'tokenFile reads a file from the controller’s filesystem; put the token inline (`token`)',
  'client-certificate': 'client-certificate is a file path; use client-certificate-data',
  'client-key': 'client-key is a file path; use client-key-data',
  username: 'basic authentication is not supported by Kubernetes; use a token or a client certificate',
  password: 'basic authentication is not supported by Kubernetes; use a token or a client certificate',
};

/**
 * Fields Kubernetes decodes as standard base64 ([]byte in YAML). client-node only decodes them
 * when it first connects, and Buffer.from(…, 'base64') silently skips bad characters, so a
 * damaged value would surface later as a confusing TLS failure: check them here instead.
 */
const base64ClusterFields = ['certificate-authority-data'] as const;
const base64UserFields = ['client-certificate-data', 'client-key-data'] as const;
const strictBase64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function isBase64(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const compact = value.replace(/\s+/g, '');
  return compact.length > 0 && strictBase64.test(compact);
}

function unsafe(message: string): KubeconfigLoad {
  return { ok: false, reason: activeReasons.kubeconfigUnsafe, message };
}

/**
 * Parses and vets a worker's kubeconfig. Only self-contained, TLS-verified configurations
 * are accepted. Messages name the problem and the fix, never a credential.
 */
export interface KubeconfigPolicy {
  /** Accept exec credential plugins (cloud IAM logins); off by default: they run programs in the controller. */
  allowExecPlugins?: boolean;
  /** The clock, for certificate validity. */
  now?: Date;
}

export function loadWorkerKubeconfig(text: string, policy: KubeconfigPolicy = {}): KubeconfigLoad {
  let raw: RawKubeconfig;
  try {
    raw = parse(text) as RawKubeconfig;
  } catch (err) {
    const line = (err as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
    return {
      ok: false,
      reason: activeReasons.kubeconfigMalformed,
      message: `the kubeconfig is not valid YAML${line ? ` (line ${line})` : ''}`,
    };
  }
  if (!raw || typeof raw !== 'object' || !Array.isArray(raw.clusters) || !Array.isArray(raw.users)) {
    return {
      ok: false,
      reason: activeReasons.kubeconfigMalformed,
      message: 'the kubeconfig has no clusters or users lists',
    };
  }
  // Entries are whatever the YAML holds (null, a string, contexts as a map): never assume objects.
  const contexts = Array.isArray(raw.contexts) ? raw.contexts : [];
  const contextName = raw['current-context'] ?? (contexts.length === 1 ? contexts[0]?.name : undefined);
  const context = contexts.find((c) => c?.name === contextName)?.context;
  if (!context) {
    return {
      ok: false,
      reason: activeReasons.kubeconfigMalformed,
      message: 'the kubeconfig has no current-context (or it names no context)',
    };
  }
  const cluster = raw.clusters.find((c) => c?.name === context.cluster)?.cluster;
  const namedUser = raw.users.find((u) => u?.name === context.user);
  if (context.user !== undefined && !namedUser) {
    return {
      ok: false,
      reason: activeReasons.kubeconfigMalformed,
      message: `the current context names user ${JSON.stringify(context.user)}, which is not in the kubeconfig`,
    };
  }
  const user = namedUser?.user ?? {};
  if (!cluster) {
    return {
      ok: false,
      reason: activeReasons.kubeconfigMalformed,
      message: `the current context names cluster ${JSON.stringify(context.cluster)}, which is not in the kubeconfig`,
    };
  }
  const server = typeof cluster.server === 'string' ? cluster.server : '';
  let url: URL;
  try {
    url = new URL(server);
    // "host:6443" parses with the scheme "host:" and an origin of "null": not a server URL.
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('not a server URL');
  } catch {
    return {
      ok: false,
      reason: activeReasons.kubeconfigMalformed,
      message: 'the cluster has no valid server URL (expected https://host:port)',
    };
  }
  if (url.protocol !== 'https:')
    return unsafe(`the server ${url.origin} is not https; credentials would travel in clear`);
  if (cluster['insecure-skip-tls-verify'] === true) {
    return unsafe(
      'insecure-skip-tls-verify is set; give the cluster’s CA in certificate-authority-data instead',
    );
  }
  if (typeof cluster['certificate-authority'] === 'string') {
    return unsafe('certificate-authority is a file path; use certificate-authority-data');
  }
  for (const [field, why] of Object.entries(unsafeUserFields)) {
    if (field === 'exec' && policy.allowExecPlugins) continue;
    if (user[field] !== undefined) return unsafe(`user field ${field} is not allowed: ${why}`);
  }
  const badData = [
    ...base64ClusterFields.filter((f) => cluster[f] !== undefined && !isBase64(cluster[f])),
    ...base64UserFields.filter((f) => user[f] !== undefined && !isBase64(user[f])),
  ];
  if (badData.length > 0) {
    return {
      ok: false,
      reason: activeReasons.kubeconfigMalformed,
      message: `${badData.join(', ')} ${badData.length === 1 ? 'is' : 'are'} not valid base64`,
    };
  }
  const certificateProblem = clientCertificateProblem(
    user['client-certificate-data'],
    policy.now ?? new Date(),
  );
  if (certificateProblem)
    return { ok: false, reason: activeReasons.certificateExpired, message: certificateProblem };
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromString(text);
    if (contextName) kubeConfig.setCurrentContext(contextName);
  } catch (err) {
    // Only client-node's structural complaints are repeated: its YAML errors can quote the input.
    const structural = /^(clusters|users|contexts)\[\d+\]\.[\w.]+ is missing$/.exec(
      err instanceof Error ? err.message : '',
    );
    return {
      ok: false,
      reason: activeReasons.kubeconfigMalformed,
      message: `the kubeconfig could not be loaded${structural ? `: ${structural[0]}` : ''}`,
    };
  }
  return { ok: true, kubeConfig, server: url.origin };
}

/**
 * An expired (or not yet valid) client certificate is named as such, before any connection:
 * the apiserver would only answer 401 and leave the admin guessing.
 */
function clientCertificateProblem(data: unknown, now: Date): string | undefined {
  if (typeof data !== 'string') return undefined;
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(Buffer.from(data, 'base64'));
  } catch {
    return undefined; // not a certificate we can read: the TLS handshake will say more
  }
  const notAfter = new Date(certificate.validTo);
  const notBefore = new Date(certificate.validFrom);
  if (now > notAfter)
    return `the client certificate expired on ${notAfter.toISOString()}: issue a new one and update the Secret`;
  if (now < notBefore)
    return `the client certificate is not valid before ${notBefore.toISOString()}: check the issuer's clock`;
  return undefined;
}
