import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type KubeconfigPolicy, loadWorkerKubeconfig } from '../src/load-worker-kubeconfig.ts';
import { ServerAddressDenyList } from '../src/server-address-deny-list.ts';
import { type ActiveReason, activeReasons } from '../src/worker-cluster.ts';

// Security tables in the manner of MultiKueue's multikueuecluster_security_test.go: every way a
// Secret's kubeconfig can be broken or make jobrelay read a file, run a program or send its
// credentials elsewhere, each with the reason admins see and the field the message names.
// Every refused field is tried on the current context's entry and on an entry no context in
// use names. Every input carries credentials, and no message may ever repeat them.

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

const TOKEN = 'jr-token-7f3a9c1e5b2d4f60';
const SPARE_TOKEN = 'jr-spare-token-5e1b7c9d0a';
const KEY_MATERIAL = 'MHcCAQEEIOzKeyMaterialThatMustNeverLeak0123456789abcdef';
const KEY_PEM = `-----BEGIN EC PRIVATE KEY-----\n${KEY_MATERIAL}\n-----END EC PRIVATE KEY-----\n`;
const KEY_DATA = b64(KEY_PEM);
const CERT_DATA = b64('-----BEGIN CERTIFICATE-----\nMIIBclientCertificate\n-----END CERTIFICATE-----\n');
const CA_DATA = b64('-----BEGIN CERTIFICATE-----\nMIIBclusterAuthority\n-----END CERTIFICATE-----\n');
const PASSWORD = 'pw-correct-horse-battery-staple';
const EXEC_SECRET = 'exec-env-secret-0d5e';
const AUTH_PROVIDER_TOKEN = 'oidc-id-token-4c8b';
const PROXY_PASSWORD = 'proxy-pw-93bd1f';
const BAD_BASE64 = `${KEY_MATERIAL}!!*`;

const secrets = [
  TOKEN,
  SPARE_TOKEN,
  KEY_MATERIAL,
  KEY_DATA,
  CERT_DATA,
  PASSWORD,
  EXEC_SECRET,
  AUTH_PROVIDER_TOKEN,
  PROXY_PASSWORD,
  BAD_BASE64,
];

type Fields = Record<string, unknown>;
interface Entry {
  name?: unknown;
  [key: string]: unknown;
}
interface Document {
  clusters: Array<Entry & { cluster: Fields }>;
  users: Array<Entry & { user: Fields }>;
  contexts: Array<Entry & { context: Fields }>;
  [key: string]: unknown;
}

/**
 * A valid kubeconfig of two of everything: index 0 is the current context's cluster, user and
 * context; index 1 is a spare nothing in use names, where the vetting must look all the same.
 */
function document(): Document {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'worker-1',
        cluster: { server: 'https://worker-1.example.com:6443', 'certificate-authority-data': CA_DATA },
      },
      {
        name: 'spare',
        cluster: { server: 'https://spare.example.com:6443', 'certificate-authority-data': CA_DATA },
      },
    ],
    users: [
      { name: 'jobrelay', user: { token: TOKEN } },
      { name: 'spare-user', user: { token: SPARE_TOKEN } },
    ],
    contexts: [
      { name: 'jobrelay@worker-1', context: { cluster: 'worker-1', user: 'jobrelay' } },
      { name: 'spare', context: { cluster: 'spare', user: 'spare-user' } },
    ],
    'current-context': 'jobrelay@worker-1',
  };
}

/** The valid kubeconfig, changed by `change`, as YAML. */
function edited(change: (doc: Document) => void): string {
  const doc = document();
  change(doc);
  return stringify(doc);
}

const valid = () => edited(() => {});
const malformed = activeReasons.kubeconfigMalformed;
const unsafe = activeReasons.kubeconfigUnsafe;

function expectRefused(
  text: string,
  reason: ActiveReason,
  fragments: string[],
  policy: KubeconfigPolicy = {},
): string {
  const result = loadWorkerKubeconfig(text, policy);
  expect(result).toMatchObject({ ok: false, reason });
  const message = result.ok ? '' : result.message;
  for (const fragment of fragments) expect(message).toContain(fragment);
  for (const secret of secrets) expect(message).not.toContain(secret);
  return message;
}

type EntryKind = 'cluster' | 'user' | 'context';
const listOf = { cluster: 'clusters', user: 'users', context: 'contexts' } as const;

/** A field outside the allow-list, set on one kind of entry, and what its refusal says. */
interface RefusedField {
  entry: EntryKind;
  field: string;
  value: unknown;
  /** Besides `<path> is not allowed`. */
  says: string;
}

const refusedFields: RefusedField[] = [
  {
    entry: 'cluster',
    field: 'certificate-authority',
    value: '/etc/kubernetes/pki/ca.crt',
    says: 'certificate-authority-data',
  },
  { entry: 'cluster', field: 'insecure-skip-tls-verify', value: true, says: 'turns off TLS verification' },
  {
    entry: 'cluster',
    field: 'proxy-url',
    value: `http://u:${PROXY_PASSWORD}@proxy.example.com:3128`,
    says: '--allow-proxy-url',
  },
  {
    entry: 'cluster',
    field: 'disable-compression',
    value: true,
    says: 'holds only server, certificate-authority-data, tls-server-name and extensions',
  },
  { entry: 'cluster', field: 'kubelet-url', value: 'https://x', says: 'holds only server' },
  {
    entry: 'user',
    field: 'token-file',
    value: '/var/run/secrets/kubernetes.io/serviceaccount/token',
    says: 'its own ServiceAccount token',
  },
  {
    entry: 'user',
    field: 'tokenFile',
    value: '/var/run/secrets/kubernetes.io/serviceaccount/token',
    says: 'put the token inline in token',
  },
  {
    entry: 'user',
    field: 'client-certificate',
    value: '/etc/jobrelay/client.crt',
    says: 'client-certificate-data',
  },
  { entry: 'user', field: 'client-key', value: '/etc/jobrelay/client.key', says: 'client-key-data' },
  {
    entry: 'user',
    field: 'exec',
    value: {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: 'aws',
      args: ['eks', 'get-token'],
      env: [{ name: 'SECRET', value: EXEC_SECRET }],
    },
    says: '--allow-exec-plugins',
  },
  {
    entry: 'user',
    field: 'auth-provider',
    value: { name: 'oidc', config: { 'id-token': AUTH_PROVIDER_TOKEN, tokenFile: '/etc/hostname' } },
    says: 'deprecated',
  },
  { entry: 'user', field: 'username', value: 'admin', says: 'basic authentication' },
  { entry: 'user', field: 'password', value: PASSWORD, says: 'basic authentication' },
  { entry: 'user', field: 'as', value: 'system:admin', says: 'impersonation' },
  { entry: 'user', field: 'as-groups', value: ['system:masters'], says: 'impersonation' },
  { entry: 'user', field: 'as-user-extra', value: { scopes: ['all'] }, says: 'impersonation' },
  // Other spellings of a file reference are refused because they are not on the list, not
  // because someone thought of them: the allow-list has no spelling to miss.
  {
    entry: 'user',
    field: 'tokenfile',
    value: '/etc/hostname',
    says: 'holds only token, client-certificate-data, client-key-data and extensions',
  },
  { entry: 'user', field: 'Token-File', value: '/etc/hostname', says: 'holds only token' },
  { entry: 'user', field: 'token_file', value: '/etc/hostname', says: 'holds only token' },
  {
    entry: 'context',
    field: 'as',
    value: 'system:admin',
    says: 'a context holds only cluster, user, namespace and extensions',
  },
  { entry: 'context', field: 'proxy-url', value: 'http://proxy.example.com', says: 'a context holds only' },
  // Names an object inherits are fields like any other, not entries of a table of reasons.
  { entry: 'user', field: 'constructor', value: 'x', says: 'holds only token' },
  { entry: 'cluster', field: 'toString', value: 'x', says: 'holds only server' },
];

describe('loadWorkerKubeconfig refuses every field outside the allow-list', () => {
  const cases = refusedFields.flatMap((refused) =>
    [0, 1].map((index) => ({
      ...refused,
      index,
      where: index === 0 ? 'the current' : 'an unused',
      path: `${listOf[refused.entry]}[${index}].${refused.entry}.${refused.field}`,
    })),
  );

  it.each(cases)('$field on $where $entry: $path', ({ entry, field, value, index, path, says }) => {
    const text = edited((doc) => {
      const list = doc[listOf[entry]] as Array<Record<string, Fields>>;
      list[index]![entry]![field] = value;
    });
    expectRefused(text, unsafe, [`${path} is not allowed: `, says]);
  });

  it('names every refused field at once, across entries, refusals first', () => {
    const text = edited((doc) => {
      doc.users[1]!.user['token-file'] = '/etc/hostname';
      doc.clusters[1]!.cluster['certificate-authority'] = '/etc/ca.crt';
      doc.users[0]!.user['client-key-data'] = BAD_BASE64;
    });
    const message = expectRefused(text, unsafe, [
      'clusters[1].cluster.certificate-authority is not allowed',
      'users[1].user.token-file is not allowed',
      'users[0].user.client-key-data is not valid base64',
    ]);
    expect(message.indexOf('token-file')).toBeLessThan(message.indexOf('client-key-data'));
  });

  it('shows five problems and counts the rest', () => {
    const text = edited((doc) => {
      for (const field of ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7']) doc.users[1]!.user[field] = 'x';
    });
    const message = expectRefused(text, unsafe, ['users[1].user.a5 is not allowed', '; and 2 more']);
    expect(message).not.toContain('a6');
  });

  it('refuses fields at the top level and beside name in an entry', () => {
    expectRefused(
      edited((doc) => {
        doc.proxy = 'http://proxy.example.com';
      }),
      unsafe,
      [
        'proxy is not allowed: a worker kubeconfig holds only apiVersion, kind, clusters, users, contexts, current-context and preferences',
      ],
    );
    expectRefused(
      edited((doc) => {
        doc.users[1]!.tokenFile = '/etc/hostname';
      }),
      unsafe,
      ['users[1].tokenFile is not allowed: an entry of users holds only name and user'],
    );
    expectRefused(
      edited((doc) => {
        doc.preferences = { colors: true, 'exec-path': '/bin/sh' };
      }),
      unsafe,
      ['preferences.exec-path is not allowed: preferences hold only colors and extensions'],
    );
    expectRefused(
      edited((doc) => {
        doc.clusters[1]!.cluster.extensions = [{ name: 'x', extension: {}, 'token-file': '/etc/hostname' }];
      }),
      unsafe,
      [
        'clusters[1].cluster.extensions[0].token-file is not allowed: an extension holds only name and extension',
      ],
    );
  });

  it('does not repeat a key that may be a credential pasted in the wrong place', () => {
    // `user: {<token>}` is YAML for a key with no value.
    const text = valid().replace(`token: ${TOKEN}`, `{${TOKEN}}`);
    expect(parse(text).users[0].user).toEqual({ [TOKEN]: null });
    expectRefused(text, unsafe, ['users[0].user has a field that is not allowed (its name is not repeated']);
    const long = 'eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.eyJzdWIiOiJqb2JyZWxheSJ9.c2lnbmF0dXJl';
    const message = expectRefused(
      edited((doc) => {
        doc.users[1]!.user[long] = 'x';
      }),
      unsafe,
      ['users[1].user has a field that is not allowed'],
    );
    expect(message).not.toContain(long);
  });

  it('refuses __proto__ like any other unknown key', () => {
    const text = valid().replace(
      `token: ${TOKEN}`,
      `token: ${TOKEN}\n      __proto__: { token-file: /etc/hostname }`,
    );
    expect(Object.keys(parse(text).users[0].user)).toEqual(['token', '__proto__']);
    expectRefused(text, unsafe, ['users[0].user has a field that is not allowed']);
  });
});

describe('loadWorkerKubeconfig refuses unsafe values and odd shapes', () => {
  interface BadCase {
    name: string;
    text: string;
    reason: ActiveReason;
    fragment: string;
    policy?: KubeconfigPolicy;
  }
  const cases: BadCase[] = [
    {
      name: 'malformed YAML (on the line holding the token)',
      text: valid().replace(`token: ${TOKEN}`, `token: "${TOKEN}\n  : [`),
      reason: malformed,
      fragment: 'is not valid YAML (line',
    },
    {
      // The YAML parser's own message quotes this line, token included.
      name: 'malformed YAML (a stray colon after the token)',
      text: valid().replace(`token: ${TOKEN}`, `token: ${TOKEN}: ${PASSWORD}`),
      reason: malformed,
      fragment: 'is not valid YAML (line',
    },
    {
      name: 'the token given twice',
      text: valid().replace(/^( *)token: (.*)$/m, '$1token: $2\n$1token: $2'),
      reason: malformed,
      fragment: 'is not valid YAML (line',
    },
    { name: 'empty text', text: '', reason: malformed, fragment: 'no clusters or users lists' },
    {
      name: 'a YAML list, not a mapping',
      text: `- token: ${TOKEN}\n- server: https://worker-1.example.com\n`,
      reason: malformed,
      fragment: 'no clusters or users lists',
    },
    { name: 'a YAML scalar', text: `${TOKEN}\n`, reason: malformed, fragment: 'no clusters or users lists' },
    {
      name: 'a mapping that is no kubeconfig (no clusters, no users)',
      text: 'hello: world\n',
      reason: malformed,
      fragment: 'no clusters or users lists',
    },
    {
      name: 'no clusters list',
      text: edited((doc) => {
        delete (doc as Partial<Document>).clusters;
      }),
      reason: malformed,
      fragment: 'clusters is missing',
    },
    {
      name: 'no users list',
      text: edited((doc) => {
        delete (doc as Partial<Document>).users;
      }),
      reason: malformed,
      fragment: 'users is missing',
    },
    {
      name: 'clusters as a map of name to cluster, not a list',
      text: edited((doc) => {
        (doc as Fields).clusters = { 'worker-1': doc.clusters[0]!.cluster };
      }),
      reason: malformed,
      fragment: 'clusters must be a list of {name, cluster} entries',
    },
    {
      name: 'users as a map',
      text: edited((doc) => {
        (doc as Fields).users = { jobrelay: { token: TOKEN } };
      }),
      reason: malformed,
      fragment: 'users must be a list of {name, user} entries',
    },
    {
      name: 'contexts as a map',
      text: edited((doc) => {
        (doc as Fields).contexts = { x: {} };
      }),
      reason: malformed,
      fragment: 'contexts must be a list of {name, context} entries',
    },
    {
      name: 'a null cluster entry',
      text: edited((doc) => {
        (doc.clusters as unknown[])[1] = null;
      }),
      reason: malformed,
      fragment: 'clusters[1] must be a mapping with name and cluster',
    },
    {
      name: 'a null user entry',
      text: edited((doc) => {
        (doc.users as unknown[])[1] = null;
      }),
      reason: malformed,
      fragment: 'users[1] must be a mapping with name and user',
    },
    {
      name: 'a cluster that is a string',
      text: edited((doc) => {
        (doc.clusters[1] as Fields).cluster = 'https://spare.example.com';
      }),
      reason: malformed,
      fragment: 'clusters[1].cluster must be a mapping',
    },
    {
      name: 'a context that is a list',
      text: edited((doc) => {
        (doc.contexts[1] as Fields).context = ['spare'];
      }),
      reason: malformed,
      fragment: 'contexts[1].context must be a mapping',
    },
    {
      name: 'an unnamed user',
      text: edited((doc) => {
        delete doc.users[1]!.name;
      }),
      reason: malformed,
      fragment: 'users[1].name is missing',
    },
    {
      name: 'a numeric cluster name',
      text: edited((doc) => {
        doc.clusters[1]!.name = 7;
      }),
      reason: malformed,
      fragment: 'clusters[1].name must be a name',
    },
    {
      name: 'two clusters of one name',
      text: edited((doc) => {
        doc.clusters[1]!.name = 'worker-1';
      }),
      reason: malformed,
      fragment: 'clusters[1].name "worker-1" is also clusters[0]\'s name',
    },
    {
      name: 'two users of one name',
      text: edited((doc) => {
        doc.users[1]!.name = 'jobrelay';
      }),
      reason: malformed,
      fragment: 'users[1].name "jobrelay" is also users[0]\'s name',
    },
    {
      name: 'two contexts of one name',
      text: edited((doc) => {
        doc.contexts[1]!.name = 'jobrelay@worker-1';
      }),
      reason: malformed,
      fragment: 'contexts[1].name "jobrelay@worker-1" is also contexts[0]\'s name',
    },
    {
      name: 'no current-context and more than one context',
      text: edited((doc) => {
        delete doc['current-context'];
      }),
      reason: malformed,
      fragment: 'has no current-context',
    },
    {
      name: 'current-context naming a missing context',
      text: edited((doc) => {
        doc['current-context'] = 'someone@elsewhere';
      }),
      reason: malformed,
      fragment: 'current-context names context "someone@elsewhere", which is not in contexts',
    },
    {
      name: 'the current context naming a missing cluster',
      text: edited((doc) => {
        doc.contexts[0]!.context.cluster = 'worker-9';
      }),
      reason: malformed,
      fragment: 'contexts[0].context.cluster, the current context\'s, names cluster "worker-9"',
    },
    {
      name: 'the current context naming a missing user',
      text: edited((doc) => {
        doc.contexts[0]!.context.user = 'missing';
      }),
      reason: malformed,
      fragment: 'names user "missing", which is not in the kubeconfig',
    },
    {
      name: 'apiVersion v2',
      text: edited((doc) => {
        doc.apiVersion = 'v2';
      }),
      reason: malformed,
      fragment: 'apiVersion must be v1',
    },
    {
      name: 'a missing server on the unused cluster',
      text: edited((doc) => {
        delete doc.clusters[1]!.cluster.server;
      }),
      reason: malformed,
      fragment: 'clusters[1].cluster.server is missing',
    },
    {
      name: 'a server without a scheme',
      text: edited((doc) => {
        doc.clusters[0]!.cluster.server = 'worker-1.example.com:6443';
      }),
      reason: malformed,
      fragment: 'clusters[0].cluster.server is not a server URL (expected https://host:port)',
    },
    {
      name: 'an http:// server on the current cluster',
      text: edited((doc) => {
        doc.clusters[0]!.cluster.server = 'http://worker-1.example.com:8080';
      }),
      reason: unsafe,
      fragment: 'clusters[0].cluster.server http://worker-1.example.com:8080 is not https',
    },
    {
      name: 'an http:// server on the unused cluster',
      text: edited((doc) => {
        doc.clusters[1]!.cluster.server = 'http://spare.example.com';
      }),
      reason: unsafe,
      fragment: 'clusters[1].cluster.server http://spare.example.com is not https',
    },
    {
      name: 'an http:// server with credentials in the URL',
      text: edited((doc) => {
        doc.clusters[0]!.cluster.server = `http://admin:${PASSWORD}@worker-1.example.com/?token=${TOKEN}`;
      }),
      reason: unsafe,
      fragment: 'http://worker-1.example.com is not https',
    },
    {
      name: 'an https:// server with credentials in the URL',
      text: edited((doc) => {
        doc.clusters[1]!.cluster.server = `https://admin:${PASSWORD}@spare.example.com`;
      }),
      reason: unsafe,
      fragment: 'clusters[1].cluster.server carries credentials',
    },
    {
      name: 'a server with a query',
      text: edited((doc) => {
        doc.clusters[0]!.cluster.server = `https://worker-1.example.com/?token=${TOKEN}`;
      }),
      reason: malformed,
      fragment: 'has a query or fragment',
    },
    {
      name: 'insecure-skip-tls-verify as a string',
      text: edited((doc) => {
        doc.clusters[1]!.cluster['insecure-skip-tls-verify'] = 'false';
      }),
      reason: malformed,
      fragment: 'clusters[1].cluster.insecure-skip-tls-verify must be true or false',
    },
    {
      name: 'bad base64 in client-key-data',
      text: edited((doc) => {
        doc.users[0]!.user = { 'client-certificate-data': CERT_DATA, 'client-key-data': BAD_BASE64 };
      }),
      reason: malformed,
      fragment: 'users[0].user.client-key-data is not valid base64',
    },
    {
      name: 'bad base64 in the unused user’s client-certificate-data',
      text: edited((doc) => {
        doc.users[1]!.user = { 'client-certificate-data': 'not base64 at all', 'client-key-data': KEY_DATA };
      }),
      reason: malformed,
      fragment: 'users[1].user.client-certificate-data is not valid base64',
    },
    {
      name: 'bad base64 in certificate-authority-data',
      text: edited((doc) => {
        doc.clusters[0]!.cluster['certificate-authority-data'] = CA_DATA.slice(0, -3);
      }),
      reason: malformed,
      fragment: 'clusters[0].cluster.certificate-authority-data is not valid base64',
    },
    {
      name: 'a client certificate without its key',
      text: edited((doc) => {
        doc.users[0]!.user = { 'client-certificate-data': CERT_DATA };
      }),
      reason: malformed,
      fragment: 'users[0].user has only one of client-certificate-data and client-key-data',
    },
    {
      name: 'a token with a line break (a second header)',
      text: edited((doc) => {
        doc.users[0]!.user.token = `${TOKEN}\r\nX-Injected: 1`;
      }),
      reason: malformed,
      fragment: 'users[0].user.token must be printable ASCII without spaces',
    },
    {
      name: 'a token that is a number',
      text: edited((doc) => {
        doc.users[1]!.user.token = 12345;
      }),
      reason: malformed,
      fragment: 'users[1].user.token must be a string',
    },
    {
      name: 'extensions that are a map',
      text: edited((doc) => {
        doc.clusters[1]!.cluster.extensions = { minikube: {} };
      }),
      reason: malformed,
      fragment: 'clusters[1].cluster.extensions must be a list of {name, extension} entries',
    },
    {
      name: 'a proxy of another scheme, when proxies are allowed',
      text: edited((doc) => {
        doc.clusters[1]!.cluster['proxy-url'] = 'ftp://proxy.example.com';
      }),
      reason: unsafe,
      fragment:
        'clusters[1].cluster.proxy-url is a ftp URL; only http, https and socks5 proxies are supported',
      policy: { allowProxyUrl: true },
    },
    {
      name: 'an exec plugin field client-go does not know, when plugins are allowed',
      text: edited((doc) => {
        doc.users[0]!.user = {
          exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws', tokenFile: '/etc/hostname' },
        };
      }),
      reason: unsafe,
      fragment: 'users[0].user.exec.tokenFile is not allowed: an exec plugin holds only apiVersion, command',
      policy: { allowExecPlugins: true },
    },
    {
      name: 'an exec plugin without a command, when plugins are allowed',
      text: edited((doc) => {
        doc.users[1]!.user = { exec: { apiVersion: 'client.authentication.k8s.io/v1' } };
      }),
      reason: malformed,
      fragment: 'users[1].user.exec.command is missing',
      policy: { allowExecPlugins: true },
    },
  ];

  it('a table of distinct cases', () => {
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  it.each(cases)('$name: $reason', ({ text, reason, fragment, policy }) => {
    expectRefused(text, reason, [fragment], policy);
  });
});

describe('loadWorkerKubeconfig builds the KubeConfig from the vetted values only', () => {
  it('an inline token over verified https, with only the current context in it', () => {
    const result = loadWorkerKubeconfig(valid());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.server).toBe('https://worker-1.example.com:6443');
    const kubeConfig = result.kubeConfig;
    expect(kubeConfig.getCurrentContext()).toBe('jobrelay@worker-1');
    expect(kubeConfig.getClusters()).toEqual([
      {
        name: 'worker-1',
        server: 'https://worker-1.example.com:6443',
        caData: CA_DATA,
        skipTLSVerify: false,
      },
    ]);
    expect(kubeConfig.getUsers()).toEqual([{ name: 'jobrelay', token: TOKEN }]);
    expect(kubeConfig.getContexts()).toEqual([
      { name: 'jobrelay@worker-1', cluster: 'worker-1', user: 'jobrelay' },
    ]);
    // The unused user's credentials are not carried along.
    expect(kubeConfig.exportConfig()).not.toContain(SPARE_TOKEN);
  });

  it('client-certificate-data and client-key-data, tls-server-name and a namespace', () => {
    const result = loadWorkerKubeconfig(
      edited((doc) => {
        doc.users[0]!.user = { 'client-certificate-data': CERT_DATA, 'client-key-data': KEY_DATA };
        doc.clusters[0]!.cluster['tls-server-name'] = 'kubernetes.default.svc';
        doc.contexts[0]!.context.namespace = 'jobrelay-system';
      }),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.kubeConfig.getCurrentUser()).toEqual({
      name: 'jobrelay',
      certData: CERT_DATA,
      keyData: KEY_DATA,
    });
    expect(result.kubeConfig.getCurrentCluster()?.tlsServerName).toBe('kubernetes.default.svc');
    expect(result.kubeConfig.getContextObject('jobrelay@worker-1')?.namespace).toBe('jobrelay-system');
  });

  it('what kubectl and minikube write: extensions, preferences, insecure-skip-tls-verify: false, empty lists as null', () => {
    const result = loadWorkerKubeconfig(
      edited((doc) => {
        const minikube = {
          name: 'cluster_info',
          extension: {
            provider: 'minikube.sigs.k8s.io',
            version: 'v1.36.0',
            'last-update': 'Mon, 01 Jan 2026',
          },
        };
        doc.clusters[0]!.cluster.extensions = [minikube];
        doc.clusters[0]!.cluster['insecure-skip-tls-verify'] = false;
        doc.contexts[0]!.context.extensions = [minikube];
        doc.users[0]!.user.extensions = null;
        doc.preferences = {};
      }),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.kubeConfig.exportConfig()).not.toContain('minikube');
  });

  it('base64 data wrapped over several lines, as some tools write it', () => {
    const wrapped = KEY_DATA.replace(/(.{40})/g, '$1\n');
    expect(wrapped).toContain('\n');
    const result = loadWorkerKubeconfig(
      edited((doc) => {
        doc.users[0]!.user = { 'client-certificate-data': CERT_DATA, 'client-key-data': wrapped };
      }),
    );
    expect(result.ok).toBe(true);
  });

  it('a single context without current-context, which becomes the current one', () => {
    const result = loadWorkerKubeconfig(
      edited((doc) => {
        doc.contexts.pop();
        delete doc['current-context'];
      }),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.kubeConfig.getCurrentContext()).toBe('jobrelay@worker-1');
    expect(result.kubeConfig.getCurrentUser()?.token).toBe(TOKEN);
  });

  it('the named current-context among several', () => {
    const result = loadWorkerKubeconfig(
      edited((doc) => {
        doc['current-context'] = 'spare';
      }),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.kubeConfig.getCurrentContext()).toBe('spare');
    expect(result.kubeConfig.getCurrentUser()).toEqual({ name: 'spare-user', token: SPARE_TOKEN });
    expect(result.kubeConfig.exportConfig()).not.toContain(TOKEN);
  });

  it('a context without a user (anonymous)', () => {
    const result = loadWorkerKubeconfig(
      edited((doc) => {
        delete doc.contexts[0]!.context.user;
      }),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.kubeConfig.getCurrentUser()).toBeNull();
    expect(result.kubeConfig.getUsers()).toEqual([]);
  });

  it('a server URL with a path, reporting only its origin', () => {
    const result = loadWorkerKubeconfig(
      edited((doc) => {
        doc.clusters[0]!.cluster.server = 'https://gateway.example.com:443/k8s/clusters/c-1/';
      }),
    );
    expect(result).toMatchObject({ ok: true, server: 'https://gateway.example.com' });
    if (!result.ok) return;
    expect(result.kubeConfig.getCurrentCluster()?.server).toBe(
      'https://gateway.example.com:443/k8s/clusters/c-1',
    );
  });

  it('proxy-url and exec only when the policy allows them', () => {
    const text = edited((doc) => {
      doc.clusters[0]!.cluster['proxy-url'] = 'socks5://proxy.example.com:1080';
      doc.users[0]!.user = {
        exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws', args: ['eks'] },
      };
    });
    expectRefused(text, unsafe, [
      'clusters[0].cluster.proxy-url is not allowed',
      'users[0].user.exec is not allowed',
    ]);
    expectRefused(text, unsafe, ['users[0].user.exec is not allowed'], { allowProxyUrl: true });
    expectRefused(text, unsafe, ['clusters[0].cluster.proxy-url is not allowed'], { allowExecPlugins: true });
    const result = loadWorkerKubeconfig(text, { allowProxyUrl: true, allowExecPlugins: true });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.kubeConfig.getCurrentCluster()?.proxyUrl).toBe('socks5://proxy.example.com:1080');
    expect(result.kubeConfig.getCurrentUser()?.exec).toEqual({
      apiVersion: 'client.authentication.k8s.io/v1',
      command: 'aws',
      args: ['eks'],
    });
  });
});

describe('client certificate validity', () => {
  const fixture = (name: string) =>
    readFileSync(new URL(`./fixtures/${name}`, import.meta.url)).toString('base64');
  const withCertificate = (certificate: string) =>
    edited((doc) => {
      doc.users[0]!.user = { 'client-certificate-data': certificate, 'client-key-data': b64('k') };
    });

  it('names an expired client certificate before any connection', () => {
    const result = loadWorkerKubeconfig(withCertificate(fixture('expired-client.crt')));
    expect(result).toMatchObject({ ok: false, reason: 'CertificateExpired' });
    expect(result.ok ? '' : result.message).toMatch(/^the client certificate expired on \d{4}-\d\d-\d\dT/);
  });

  it('accepts a certificate that is still valid', () => {
    expect(loadWorkerKubeconfig(withCertificate(fixture('valid-client.crt'))).ok).toBe(true);
  });
});

describe('server address deny-list, when vetting', () => {
  const denyList = new ServerAddressDenyList(['10.96.0.0/12', 'fd00:10:96::/112']);
  const cases: Array<{ server: string; index: number; says: string }> = [
    { server: 'https://127.0.0.1:6443', index: 0, says: '127.0.0.0/8 (loopback)' },
    { server: 'https://127.200.0.1', index: 1, says: '127.0.0.0/8 (loopback)' },
    { server: 'https://[::1]:6443', index: 0, says: '::1/128 (loopback)' },
    { server: 'https://[::ffff:127.0.0.1]:6443', index: 0, says: '127.0.0.0/8 (loopback)' },
    { server: 'https://2130706433:6443', index: 0, says: '127.0.0.0/8 (loopback)' },
    { server: 'https://0x7f.1:6443', index: 1, says: '127.0.0.0/8 (loopback)' },
    { server: 'https://0.0.0.0:6443', index: 0, says: '0.0.0.0/8 (unspecified, reaches this host)' },
    { server: 'https://169.254.169.254', index: 1, says: '169.254.0.0/16 (link-local)' },
    { server: 'https://[fe80::1]', index: 0, says: 'fe80::/10 (link-local)' },
    { server: 'https://10.96.0.1', index: 0, says: '10.96.0.0/12 (--denied-server-cidrs)' },
    { server: 'https://[fd00:10:96::1]', index: 1, says: 'fd00:10:96::/112 (--denied-server-cidrs)' },
    { server: 'https://localhost:6443', index: 0, says: 'loopback (localhost)' },
    { server: 'https://api.localhost', index: 1, says: 'loopback (localhost)' },
  ];

  it.each(cases)('refuses $server on clusters[$index], naming the range', ({ server, index, says }) => {
    const text = edited((doc) => {
      doc.clusters[index]!.cluster.server = server;
    });
    expectRefused(text, unsafe, [`clusters[${index}].cluster.server https://`, `is in ${says}`], {
      serverAddressDenyList: denyList,
    });
    // Off by default: the same kubeconfig is accepted without the deny-list.
    expect(loadWorkerKubeconfig(text).ok).toBe(true);
  });

  it('accepts addresses outside the ranges, and host names (checked when connecting)', () => {
    for (const server of ['https://10.0.0.1:6443', 'https://[2001:db8::1]', 'https://worker-1.example.com']) {
      const text = edited((doc) => {
        doc.clusters[0]!.cluster.server = server;
      });
      expect(loadWorkerKubeconfig(text, { serverAddressDenyList: denyList }).ok, server).toBe(true);
    }
  });
});

// -- properties ---------------------------------------------------------------------------------

const allowedKeys = {
  top: ['apiVersion', 'kind', 'clusters', 'users', 'contexts', 'current-context', 'preferences'],
  cluster: [
    'server',
    'certificate-authority-data',
    'tls-server-name',
    'insecure-skip-tls-verify',
    'extensions',
  ],
  user: ['token', 'client-certificate-data', 'client-key-data', 'extensions'],
  context: ['cluster', 'user', 'namespace', 'extensions'],
  preferences: ['colors', 'extensions'],
  clustersEntry: ['name', 'cluster'],
  usersEntry: ['name', 'user'],
  contextsEntry: ['name', 'context'],
} as const;

const entryName = fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/);
const base64 = fc
  .uint8Array({ minLength: 1, maxLength: 48 })
  .map((bytes) => Buffer.from(bytes).toString('base64'));
const extensionList = fc.array(
  fc.record({ name: fc.stringMatching(/^[a-z][a-z_.]{0,12}$/), extension: fc.jsonValue({ maxDepth: 2 }) }),
  { maxLength: 2 },
);
const clusterArbitrary = fc.record(
  {
    server: fc
      .tuple(fc.domain(), fc.integer({ min: 1, max: 65_535 }), fc.constantFrom('', '/', '/k8s/c-1'))
      .map(([host, port, path]) => `https://${host}:${port}${path}`),
    'certificate-authority-data': base64,
    'tls-server-name': fc.domain(),
    'insecure-skip-tls-verify': fc.constant(false),
    extensions: extensionList,
  },
  { requiredKeys: ['server'] },
);
const userArbitrary = fc.oneof(
  fc.record(
    { token: fc.stringMatching(/^[\x21-\x7e]{1,40}$/), extensions: extensionList },
    { requiredKeys: [] },
  ),
  fc.record({ 'client-certificate-data': base64, 'client-key-data': base64 }),
);

/** A kubeconfig of allowed fields only, of 1–3 clusters, users and contexts, the current one valid. */
const allowedKubeconfig = fc
  .tuple(
    fc.uniqueArray(entryName, { minLength: 1, maxLength: 3 }),
    fc.uniqueArray(entryName, { minLength: 1, maxLength: 3 }),
    fc.uniqueArray(entryName, { minLength: 1, maxLength: 3 }),
  )
  .chain(([clusterNames, userNames, contextNames]) =>
    fc.record(
      {
        apiVersion: fc.constant('v1'),
        kind: fc.constant('Config'),
        clusters: fc.tuple(
          ...clusterNames.map((name) => clusterArbitrary.map((cluster) => ({ name, cluster }))),
        ),
        users: fc.tuple(...userNames.map((name) => userArbitrary.map((user) => ({ name, user })))),
        contexts: fc.tuple(
          ...contextNames.map((name) =>
            fc
              .record(
                {
                  cluster: fc.constantFrom(...clusterNames),
                  user: fc.constantFrom(...userNames),
                  namespace: entryName,
                  extensions: extensionList,
                },
                { requiredKeys: ['cluster'] },
              )
              .map((context) => ({ name, context })),
          ),
        ),
        'current-context': fc.constantFrom(...contextNames),
        preferences: fc.record({ colors: fc.boolean() }, { requiredKeys: [] }),
      },
      { requiredKeys: ['clusters', 'users', 'contexts', 'current-context'] },
    ),
  );

type Where = keyof typeof allowedKeys;

/** Where a field outside the allow-list goes: the mapping's path in the document, and its kind. */
function placesIn(doc: Record<string, unknown>): Array<{ path: Array<string | number>; where: Where }> {
  const places: Array<{ path: Array<string | number>; where: Where }> = [{ path: [], where: 'top' }];
  for (const [list, key] of [
    ['clusters', 'cluster'],
    ['users', 'user'],
    ['contexts', 'context'],
  ] as const) {
    (doc[list] as unknown[]).forEach((_, index) => {
      places.push({ path: [list, index], where: `${list}Entry` });
      places.push({ path: [list, index, key], where: key });
    });
  }
  if (doc.preferences) places.push({ path: ['preferences'], where: 'preferences' });
  return places;
}

const pathText = (path: ReadonlyArray<string | number>) =>
  path.map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${part}`)).join('');

describe('properties of the allow-list', () => {
  it('a kubeconfig built only from allowed fields loads, with the current context’s values', {
    timeout: 120_000,
  }, () => {
    fc.assert(
      fc.property(allowedKubeconfig, (doc) => {
        const result = loadWorkerKubeconfig(stringify(doc));
        expect(result.ok, result.ok ? '' : result.message).toBe(true);
        if (!result.ok) return;
        const context = doc.contexts.find((c) => c.name === doc['current-context'])!.context;
        const cluster = doc.clusters.find((c) => c.name === context.cluster)!.cluster;
        expect(result.kubeConfig.getCurrentCluster()?.server).toBe(cluster.server.replace(/\/+$/, ''));
        expect(result.kubeConfig.getClusters()).toHaveLength(1);
        expect(result.kubeConfig.getUsers().length).toBeLessThanOrEqual(1);
      }),
      { numRuns: 200 },
    );
  });

  it('a kubeconfig carrying any field outside the allow-list, anywhere, is refused naming where', {
    timeout: 120_000,
  }, () => {
    const refusedKey = fc.oneof(
      fc.constantFrom(
        'token-file',
        'tokenFile',
        'client-certificate',
        'client-key',
        'certificate-authority',
        'exec',
        'auth-provider',
        'username',
        'password',
        'proxy-url',
        'as',
        '__proto__',
        'constructor',
        'toString',
      ),
      fc.string({ minLength: 1, maxLength: 20 }),
    );
    fc.assert(
      fc.property(
        allowedKubeconfig,
        fc.nat(),
        refusedKey,
        fc.jsonValue({ maxDepth: 2 }),
        (doc, pick, key, value) => {
          const places = placesIn(doc);
          const { path, where } = places[pick % places.length]!;
          fc.pre(!(allowedKeys[where] as readonly string[]).includes(key));
          const target = path.reduce<Record<string | number, unknown>>(
            (at, part) => at[part] as Record<string | number, unknown>,
            doc as Record<string, unknown>,
          );
          Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
          const result = loadWorkerKubeconfig(stringify(doc));
          expect(result).toMatchObject({ ok: false, reason: unsafe });
          const message = result.ok ? '' : result.message;
          const parent = pathText(path);
          const named = `${parent ? `${parent}.` : ''}${key} is not allowed: `;
          const unnamed = `${parent || 'the kubeconfig'} has a field that is not allowed`;
          expect(message.includes(named) || message.includes(unnamed), message).toBe(true);
          expect(message).not.toContain('[native code]');
        },
      ),
      { numRuns: 500 },
    );
  });

  it('answers any text with a load or a refusal, never an exception, whatever the policy', {
    timeout: 120_000,
  }, () => {
    /** Every path to a value in the document. */
    const pathsOf = (value: unknown, path: Array<string | number> = []): Array<Array<string | number>> =>
      value && typeof value === 'object'
        ? [
            path,
            ...Object.entries(value).flatMap(([key, v]) =>
              pathsOf(v, [...path, Array.isArray(value) ? Number(key) : key]),
            ),
          ]
        : [path];
    const junkedKubeconfig = fc
      .tuple(allowedKubeconfig, fc.nat(), fc.jsonValue({ maxDepth: 2 }))
      .map(([doc, pick, junk]) => {
        const paths = pathsOf(doc).filter((path) => path.length > 0);
        const path = paths[pick % paths.length]!;
        const parent = path
          .slice(0, -1)
          .reduce<Record<string | number, unknown>>(
            (at, part) => at[part] as Record<string | number, unknown>,
            doc as Record<string, unknown>,
          );
        parent[path.at(-1)!] = junk;
        return stringify(doc);
      });
    const policies: KubeconfigPolicy[] = [
      {},
      {
        allowExecPlugins: true,
        allowProxyUrl: true,
        serverAddressDenyList: new ServerAddressDenyList(['10.0.0.0/8']),
      },
    ];
    fc.assert(
      fc.property(
        fc.oneof(
          junkedKubeconfig,
          fc.string(),
          fc.jsonValue().map((value) => stringify(value)),
        ),
        fc.constantFrom(...policies),
        (text, policy) => {
          const result = loadWorkerKubeconfig(text, policy);
          if (!result.ok) expect(result.message.length).toBeGreaterThan(0);
        },
      ),
      { numRuns: 500 },
    );
  });
});
