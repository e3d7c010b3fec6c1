import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { type Cluster, type Context, KubeConfig, type User } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { z } from 'zod';
import { AddressGuardedKubeConfig } from './address-guarded-kube-config.ts';
import type { ServerAddressDenyList } from './server-address-deny-list.ts';
import { type ActiveReason, activeReasons } from './worker-cluster.ts';

export type KubeconfigLoad =
  | { ok: true; kubeConfig: KubeConfig; server: string }
  | { ok: false; reason: ActiveReason; message: string };

/** What an installation accepts in a worker kubeconfig beyond the allow-list below. */
export interface KubeconfigPolicy {
  /** Accept exec credential plugins (cloud IAM logins); off by default: they run programs in jobrelay. */
  allowExecPlugins?: boolean;
  /** Accept `proxy-url` on a cluster (http, https or socks5 only); off by default. */
  allowProxyUrl?: boolean;
  /** Refuse servers in these ranges (literal IPs when vetted, host names at every connection); none by default. */
  serverAddressDenyList?: ServerAddressDenyList;
  /** The clock, for certificate validity. */
  now?: Date;
}

// The allow-list is the zod schema below (kubeconfigSchema): only what a worker connection
// needs. A field not in it is refused, on every entry (not only the current context's), so
// nothing jobrelay stores can make it read a file, run a program or send its credentials
// elsewhere. `extensions` (minikube and other tools write them) are data no client reads:
// accepted and dropped. `insecure-skip-tls-verify: false` says what is true anyway: accepted.
// The lists here only name the allowed fields in refusals.
const clusterFields = ['server', 'certificate-authority-data', 'tls-server-name', 'extensions'] as const;
const userFields = ['token', 'client-certificate-data', 'client-key-data', 'extensions'] as const;
const contextFields = ['cluster', 'user', 'namespace', 'extensions'] as const;

const readsTokenFile =
  'it names a file, which jobrelay would read from its own filesystem (its own ServiceAccount token, for one) and send as the bearer token; put the token inline in token';
const basicAuthentication =
  'basic authentication is not supported by Kubernetes; use a token or a client certificate';
const impersonation =
  'impersonation is not supported; give jobrelay a token or certificate of the identity it should act as';
const filePath = (inline: string, what: string) =>
  `it is a file path, which jobrelay would read from its own filesystem; put the ${what} inline in ${inline}`;

/** Refused fields people do write, with why and what to write instead. */
const whyRefused: Record<'cluster' | 'user', Record<string, string>> = {
  cluster: {
    'certificate-authority': `${filePath('certificate-authority-data', 'CA')} (kubectl config view --raw --flatten does)`,
    'proxy-url':
      'this installation sends no worker traffic through a proxy; connect to the server directly, or an admin can allow proxies (--allow-proxy-url)',
    'insecure-skip-tls-verify':
      'it turns off TLS verification; give the cluster’s CA in certificate-authority-data instead',
  },
  user: {
    'token-file': readsTokenFile,
    tokenFile: readsTokenFile,
    'client-certificate': filePath('client-certificate-data', 'certificate'),
    'client-key': filePath('client-key-data', 'key'),
    exec: 'an exec credential plugin would run a program inside jobrelay; use a token or a client certificate, or an admin can allow plugins (--allow-exec-plugins)',
    'auth-provider':
      'auth-provider plugins run code and read files, and are deprecated; use a token or a client certificate',
    username: basicAuthentication,
    password: basicAuthentication,
    as: impersonation,
    'as-uid': impersonation,
    'as-groups': impersonation,
    'as-user-extra': impersonation,
  },
};

/** A problem found in a kubeconfig: its reason, and a message naming the field by path. */
interface Problem {
  reason: ActiveReason;
  message: string;
}

const malformed = activeReasons.kubeconfigMalformed;
const unsafe = activeReasons.kubeconfigUnsafe;

/** A custom zod issue that is a safety refusal (the rest of the shape problems are malformations). */
function refuse(context: z.RefinementCtx, message: string): void {
  context.addIssue({ code: 'custom', message, params: { reason: unsafe } });
}

const text = (what = 'a string') =>
  z.string({ error: (issue) => (issue.input === undefined ? 'is missing' : `must be ${what}`) });
const nonEmpty = (what?: string) => text(what).min(1, 'must not be empty');

/**
 * Fields Kubernetes decodes as standard base64 ([]byte in YAML). client-node only decodes them
 * when it first connects, and Buffer.from(…, 'base64') silently skips bad characters, so a
 * damaged value would surface later as a confusing TLS failure: check them here instead.
 */
const strictBase64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const base64Data = text('base64 text').refine((value) => {
  const compact = value.replace(/\s+/g, '');
  return compact.length > 0 && strictBase64.test(compact);
}, 'is not valid base64');

/** Tool data (minikube's, for one): a list of named entries no client reads. */
const extensions = z
  .array(z.strictObject({ name: nonEmpty(), extension: z.unknown() }), {
    error: 'must be a list of {name, extension} entries',
  })
  .nullable();

/** `{error}` for an object schema: the shape message, leaving unknown keys to problemsOf. */
const mapping = (what: string) => ({
  error: (issue: { code: string }) => (issue.code === 'unrecognized_keys' ? undefined : `must be ${what}`),
});

function serverSchema(policy: KubeconfigPolicy) {
  return text('a URL').superRefine((server, context) => {
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      context.addIssue({ code: 'custom', message: 'is not a server URL (expected https://host:port)' });
      return;
    }
    // "host:6443" parses with the scheme "host:" and an origin of "null": not a server URL.
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      context.addIssue({ code: 'custom', message: 'is not a server URL (expected https://host:port)' });
      return;
    }
    if (url.protocol !== 'https:') {
      refuse(context, `${url.origin} is not https; credentials would travel in clear`);
      return;
    }
    if (url.username || url.password) {
      refuse(context, 'carries credentials (user:password@); put the token in the user entry');
      return;
    }
    if (url.search || url.hash) {
      context.addIssue({
        code: 'custom',
        message: `${url.origin} has a query or fragment; a server is https://host[:port][/path]`,
      });
      return;
    }
    const denied = deniedHost(url.hostname, policy.serverAddressDenyList);
    if (denied)
      refuse(context, `${url.origin} is in ${denied}, where this installation refuses worker servers`);
  });
}

/** The denied range a server's host is in, when it can be known without resolving it. */
function deniedHost(hostname: string, denyList: ServerAddressDenyList | undefined): string | undefined {
  if (!denyList) return undefined;
  const bare = hostname.replace(/^\[|\]$/g, '');
  // RFC 6761: localhost names are loopback wherever they are resolved.
  if (isIP(bare) === 0) return /(^|\.)localhost\.?$/i.test(bare) ? 'loopback (localhost)' : undefined;
  const range = denyList.rangeOf(bare);
  return range ? `${range.cidr} (${range.why})` : undefined;
}

const proxyUrl = text('a URL').superRefine((value, context) => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    context.addIssue({ code: 'custom', message: 'is not a URL (expected http://, https:// or socks5://)' });
    return;
  }
  if (!['http:', 'https:', 'socks5:'].includes(url.protocol))
    refuse(
      context,
      `is a ${url.protocol.replace(/:$/, '')} URL; only http, https and socks5 proxies are supported`,
    );
});

/** An exec credential plugin, as client-go reads one (only when the policy allows plugins). */
const execPlugin = z.strictObject(
  {
    apiVersion: nonEmpty(),
    command: nonEmpty(),
    args: z.array(text()).nullable().optional(),
    env: z
      .array(z.strictObject({ name: nonEmpty(), value: text() }), {
        error: 'must be a list of {name, value}',
      })
      .nullable()
      .optional(),
    installHint: text().optional(),
    provideClusterInfo: z.boolean({ error: 'must be true or false' }).optional(),
    interactiveMode: z.enum(['Never', 'IfAvailable', 'Always']).optional(),
  },
  mapping('a mapping (command, args, env, apiVersion)'),
);

/** A field the policy turns off: refused with why, whatever its value. */
const refusedByPolicy = (entry: 'cluster' | 'user', field: string) =>
  z
    .unknown()
    .superRefine((_, context) => refuse(context, `is not allowed: ${whyRefused[entry][field]}`))
    .optional();

/** A kubeconfig list: `{name, <key>}` entries. */
const entries = <Shape extends z.core.$ZodLooseShape>(key: string, shape: Shape) =>
  z.array(z.strictObject({ name: nonEmpty('a name'), ...shape }, mapping(`a mapping with name and ${key}`)), {
    error: (issue) => (issue.input === undefined ? 'is missing' : `must be a list of {name, ${key}} entries`),
  });

function kubeconfigSchema(policy: KubeconfigPolicy) {
  const cluster = z.strictObject(
    {
      server: serverSchema(policy),
      'certificate-authority-data': base64Data.optional(),
      'tls-server-name': nonEmpty('a host name').optional(),
      'insecure-skip-tls-verify': z
        .boolean({ error: 'must be true or false' })
        .optional()
        .superRefine((skip, context) => {
          if (skip === true)
            refuse(context, `is not allowed: ${whyRefused.cluster['insecure-skip-tls-verify']}`);
        }),
      'proxy-url': policy.allowProxyUrl ? proxyUrl.optional() : refusedByPolicy('cluster', 'proxy-url'),
      extensions: extensions.optional(),
    },
    mapping('a mapping (server, certificate-authority-data, ...)'),
  );
  const user = z
    .strictObject(
      {
        // Printable ASCII only: anything else would be refused as an HTTP header, or inject one.
        token: nonEmpty()
          .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
          .optional(),
        'client-certificate-data': base64Data.optional(),
        'client-key-data': base64Data.optional(),
        exec: policy.allowExecPlugins ? execPlugin.optional() : refusedByPolicy('user', 'exec'),
        extensions: extensions.optional(),
      },
      mapping('a mapping (token, or client-certificate-data and client-key-data)'),
    )
    .nullable();
  const context = z.strictObject(
    {
      cluster: nonEmpty('a cluster name'),
      user: text('a user name').optional(),
      namespace: text('a namespace name').optional(),
      extensions: extensions.optional(),
    },
    mapping('a mapping (cluster, user, namespace)'),
  );
  return z.strictObject(
    {
      apiVersion: z.literal('v1', { error: 'must be v1' }).optional(),
      kind: z.literal('Config', { error: 'must be Config' }).optional(),
      clusters: entries('cluster', { cluster }),
      users: entries('user', { user }),
      contexts: entries('context', { context }).nullable().optional(),
      'current-context': text().nullable().optional(),
      preferences: z
        .strictObject(
          {
            colors: z.boolean({ error: 'must be true or false' }).optional(),
            extensions: extensions.optional(),
          },
          mapping('a mapping'),
        )
        .nullable()
        .optional(),
    },
    mapping('a YAML mapping of clusters, users and contexts'),
  );
}

type VettedKubeconfig = z.infer<ReturnType<typeof kubeconfigSchema>>;

/**
 * A field name as messages show it: a key that does not look like a field name, or that has
 * no value (`user: {<token>}` makes the token a key), may be a credential pasted in the wrong
 * place, so it is not repeated.
 */
function shownKey(key: string, value: unknown): string | undefined {
  return value !== null && /^[A-Za-z][A-Za-z0-9_-]{0,39}$/.test(key) ? key : undefined;
}

/** `users[1].user.token-file`. */
function pathText(path: ReadonlyArray<PropertyKey>): string {
  return path
    .map((part, index) =>
      typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`,
    )
    .join('');
}

/** The value at `path` of the parsed document, to tell a named field from a pasted value. */
function valueAt(document: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let value = document;
  for (const part of path) value = (value as Record<PropertyKey, unknown> | null)?.[part];
  return value;
}

/** Every issue zod found, as problems naming the field by path. */
function problemsOf(
  issues: readonly z.core.$ZodIssue[],
  document: unknown,
  policy: KubeconfigPolicy,
): Problem[] {
  const problems: Problem[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      const parent = valueAt(document, issue.path) as Record<string, unknown>;
      const entry = issue.path.at(-1);
      for (const key of issue.keys) {
        const shown = shownKey(key, parent?.[key]);
        const at = pathText(issue.path);
        if (shown === undefined) {
          problems.push({
            reason: unsafe,
            message: `${at || 'the kubeconfig'} has a field that is not allowed (its name is not repeated: it may be a credential)`,
          });
          continue;
        }
        const why =
          (entry === 'cluster' || entry === 'user') && Object.hasOwn(whyRefused[entry], key)
            ? whyRefused[entry][key]
            : undefined;
        problems.push({
          reason: unsafe,
          message: `${pathText([...issue.path, key])} is not allowed: ${why ?? allowedFieldsOf(issue.path, policy)}`,
        });
      }
      continue;
    }
    const reason =
      issue.code === 'custom' && (issue.params as { reason?: ActiveReason } | undefined)?.reason
        ? (issue.params as { reason: ActiveReason }).reason
        : malformed;
    const at = pathText(issue.path);
    problems.push({ reason, message: at ? `${at} ${issue.message}` : `the kubeconfig ${issue.message}` });
  }
  return problems;
}

/** What the mapping at `path` may hold, for the message refusing an unknown field. */
function allowedFieldsOf(path: ReadonlyArray<PropertyKey>, policy: KubeconfigPolicy): string {
  const list = (fields: readonly string[]) => `${fields.slice(0, -1).join(', ')} and ${fields.at(-1)}`;
  const last = path.at(-1);
  const parent = path.at(-2);
  if (path.length === 0)
    return `a worker kubeconfig holds only ${list(['apiVersion', 'kind', 'clusters', 'users', 'contexts', 'current-context', 'preferences'])}`;
  if (path.length === 2 && typeof last === 'number') {
    const key = { clusters: 'cluster', users: 'user', contexts: 'context' }[String(path[0])];
    return `an entry of ${String(path[0])} holds only name and ${key}`;
  }
  if (last === 'cluster')
    return `a worker's cluster entry holds only ${list([...clusterFields.slice(0, -1), ...(policy.allowProxyUrl ? ['proxy-url'] : []), 'extensions'])}`;
  if (last === 'user')
    return `a worker's user entry holds only ${list([...userFields.slice(0, -1), ...(policy.allowExecPlugins ? ['exec'] : []), 'extensions'])}`;
  if (last === 'context') return `a context holds only ${list(contextFields)}`;
  if (last === 'preferences') return 'preferences hold only colors and extensions';
  if (last === 'exec')
    return 'an exec plugin holds only apiVersion, command, args, env, installHint, provideClusterInfo and interactiveMode';
  if (parent === 'extensions') return 'an extension holds only name and extension';
  if (parent === 'env') return 'an env entry holds only name and value';
  return 'jobrelay does not know this field';
}

/** Refusals first (they say what must go), then malformations; a few, then how many more. */
function refusal(problems: readonly Problem[]): KubeconfigLoad {
  const order: ActiveReason[] = [unsafe, malformed];
  const sorted = [...problems].sort((a, b) => order.indexOf(a.reason) - order.indexOf(b.reason));
  const shown = sorted.slice(0, maxProblemsShown).map((p) => p.message);
  const more = sorted.length - shown.length;
  return {
    ok: false,
    reason: sorted[0]!.reason,
    message: `${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`,
  };
}

/** Enough to fix a pasted kubeconfig in one go, short enough for a condition message. */
const maxProblemsShown = 5;

/** Two entries of one list with the same name: kubectl takes the first, client-node too; refused as ambiguous. */
function duplicateNames(kubeconfig: VettedKubeconfig): Problem[] {
  const problems: Problem[] = [];
  for (const key of ['clusters', 'users', 'contexts'] as const) {
    const entries = kubeconfig[key] ?? [];
    entries.forEach((entry, index) => {
      const first = entries.findIndex((other) => other.name === entry.name);
      if (first !== index)
        problems.push({
          reason: malformed,
          message: `${key}[${index}].name ${JSON.stringify(entry.name)} is also ${key}[${first}]'s name`,
        });
    });
  }
  return problems;
}

/**
 * Parses and vets a worker's kubeconfig against the allow-list, then builds the KubeConfig from
 * the vetted values of the current context only: client-node never sees the submitted text, so
 * no file it names is ever read, at load or later. Messages name the field by path and the fix,
 * never a credential.
 */
export function loadWorkerKubeconfig(text: string, policy: KubeconfigPolicy = {}): KubeconfigLoad {
  let document: unknown;
  try {
    // Errors only: yaml's warnings go to the process's stderr and quote the input (a credential, maybe).
    document = parse(text, { logLevel: 'error' });
  } catch (err) {
    // The parser's own message can quote the line, and so a credential: only the line number.
    const line = (err as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
    return {
      ok: false,
      reason: malformed,
      message: `the kubeconfig is not valid YAML${line ? ` (line ${line})` : ''}`,
    };
  }
  // Not a kubeconfig at all (no clusters and no users): malformed, whatever else it holds.
  if (
    !document ||
    typeof document !== 'object' ||
    Array.isArray(document) ||
    (!('clusters' in document) && !('users' in document))
  ) {
    return { ok: false, reason: malformed, message: 'the kubeconfig has no clusters or users lists' };
  }
  const parsed = kubeconfigSchema(policy).safeParse(document);
  if (!parsed.success) return refusal(problemsOf(parsed.error.issues, document, policy));
  const kubeconfig = parsed.data;
  const duplicates = duplicateNames(kubeconfig);
  if (duplicates.length > 0) return refusal(duplicates);

  const contexts = kubeconfig.contexts ?? [];
  const contextName =
    kubeconfig['current-context'] || (contexts.length === 1 ? contexts[0]!.name : undefined);
  const contextIndex = contexts.findIndex((c) => c.name === contextName);
  const context = contexts[contextIndex]?.context;
  if (!context) {
    return {
      ok: false,
      reason: malformed,
      message: kubeconfig['current-context']
        ? `current-context names context ${JSON.stringify(kubeconfig['current-context'])}, which is not in contexts (the kubeconfig names no context to use)`
        : 'the kubeconfig has no current-context (or it names no context)',
    };
  }
  const at = `contexts[${contextIndex}].context`;
  const cluster = kubeconfig.clusters.find((c) => c.name === context.cluster);
  if (!cluster) {
    return {
      ok: false,
      reason: malformed,
      message: `${at}.cluster, the current context's, names cluster ${JSON.stringify(context.cluster)}, which is not in the kubeconfig`,
    };
  }
  const user = context.user ? kubeconfig.users.find((u) => u.name === context.user) : undefined;
  if (context.user && !user) {
    return {
      ok: false,
      reason: malformed,
      message: `${at}.user, the current context's, names user ${JSON.stringify(context.user)}, which is not in the kubeconfig`,
    };
  }
  const credentials = user?.user ?? undefined;
  const certificateData = credentials?.['client-certificate-data'];
  const keyData = credentials?.['client-key-data'];
  if ((certificateData === undefined) !== (keyData === undefined)) {
    return {
      ok: false,
      reason: malformed,
      message: `users[${kubeconfig.users.indexOf(user!)}].user has only one of client-certificate-data and client-key-data; a client certificate needs both`,
    };
  }
  const certificateProblem = clientCertificateProblem(certificateData, policy.now ?? new Date());
  if (certificateProblem)
    return { ok: false, reason: activeReasons.certificateExpired, message: certificateProblem };

  const url = new URL(cluster.cluster.server);
  const proxy = cluster.cluster['proxy-url'];
  const vettedCluster: Cluster = {
    name: cluster.name,
    // client-node appends API paths to it: no trailing slash.
    server: cluster.cluster.server.replace(/\/+$/, ''),
    skipTLSVerify: false,
    ...(cluster.cluster['certificate-authority-data'] !== undefined
      ? { caData: cluster.cluster['certificate-authority-data'] }
      : {}),
    ...(cluster.cluster['tls-server-name'] !== undefined
      ? { tlsServerName: cluster.cluster['tls-server-name'] }
      : {}),
    ...(typeof proxy === 'string' ? { proxyUrl: proxy } : {}),
  };
  const vettedUser: User | undefined = user
    ? {
        name: user.name,
        ...(credentials?.token !== undefined ? { token: credentials.token } : {}),
        ...(certificateData !== undefined ? { certData: certificateData } : {}),
        ...(keyData !== undefined ? { keyData } : {}),
        ...(credentials?.exec !== undefined ? { exec: credentials.exec } : {}),
      }
    : undefined;
  const vettedContext = {
    name: contextName!,
    cluster: cluster.name,
    ...(vettedUser ? { user: vettedUser.name } : {}),
    ...(context.namespace ? { namespace: context.namespace } : {}),
  } as Context;
  const denyList = policy.serverAddressDenyList;
  // A host name is checked again at every connection: its answer can change after vetting.
  const kubeConfig =
    denyList && !vettedCluster.proxyUrl ? new AddressGuardedKubeConfig(denyList.lookup()) : new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [vettedCluster],
    users: vettedUser ? [vettedUser] : [],
    contexts: [vettedContext],
    currentContext: vettedContext.name,
  });
  return { ok: true, kubeConfig, server: url.origin };
}

/**
 * An expired (or not yet valid) client certificate is named as such, before any connection:
 * the apiserver would only answer 401 and leave the admin guessing.
 */
function clientCertificateProblem(data: string | undefined, now: Date): string | undefined {
  if (data === undefined) return undefined;
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
