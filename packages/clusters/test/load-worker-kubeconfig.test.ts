import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadWorkerKubeconfig } from '../src/load-worker-kubeconfig.ts';
import { type ActiveReason, activeReasons } from '../src/worker-cluster.ts';

// Security table in the manner of MultiKueue's multikueuecluster_security_test.go: every way a
// Secret's kubeconfig can be broken or make the controller do something unsafe, each with the
// reason admins see and a fragment of the message. Every input carries credentials, and no
// message may ever repeat them.

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

const TOKEN = 'jr-token-7f3a9c1e5b2d4f60';
const KEY_MATERIAL = 'MHcCAQEEIOzKeyMaterialThatMustNeverLeak0123456789abcdef';
const KEY_PEM = `-----BEGIN EC PRIVATE KEY-----\n${KEY_MATERIAL}\n-----END EC PRIVATE KEY-----\n`;
const KEY_DATA = b64(KEY_PEM);
const CERT_DATA = b64('-----BEGIN CERTIFICATE-----\nMIIBclientCertificate\n-----END CERTIFICATE-----\n');
const CA_DATA = b64('-----BEGIN CERTIFICATE-----\nMIIBclusterAuthority\n-----END CERTIFICATE-----\n');
const PASSWORD = 'pw-correct-horse-battery-staple';
const EXEC_SECRET = 'exec-env-secret-0d5e';
const AUTH_PROVIDER_TOKEN = 'oidc-id-token-4c8b';
const BAD_BASE64 = `${KEY_MATERIAL}!!*`;

const secrets = [
  TOKEN,
  KEY_MATERIAL,
  KEY_DATA,
  CERT_DATA,
  PASSWORD,
  EXEC_SECRET,
  AUTH_PROVIDER_TOKEN,
  BAD_BASE64,
];

type Fields = Record<string, unknown>;

/** A valid, self-contained kubeconfig for one worker, changed one step at a time. */
class KubeconfigBuilder {
  private cluster: Fields = {
    server: 'https://worker-1.example.com:6443',
    'certificate-authority-data': CA_DATA,
  };
  private user: Fields = { token: TOKEN };
  private contextCluster = 'worker-1';
  private contexts: Array<{ name: string; context: Fields }> | undefined;
  private currentContext: string | undefined = 'jobrelay@worker-1';
  private dropped = new Set<'clusters' | 'users'>();
  private userName: string | undefined = 'jobrelay';

  static valid(): KubeconfigBuilder {
    return new KubeconfigBuilder();
  }

  withCluster(fields: Fields): this {
    this.cluster = { ...this.cluster, ...fields };
    return this;
  }

  withoutClusterField(field: string): this {
    const { [field]: _, ...rest } = this.cluster;
    this.cluster = rest;
    return this;
  }

  /** Replaces the user's credentials. */
  withUser(fields: Fields): this {
    this.user = fields;
    return this;
  }

  /** Adds fields next to the token. */
  withUserFields(fields: Fields): this {
    this.user = { ...this.user, ...fields };
    return this;
  }

  withUnnamedUser(): this {
    this.userName = undefined;
    return this;
  }

  withContextCluster(name: string): this {
    this.contextCluster = name;
    return this;
  }

  withCurrentContext(name: string | undefined): this {
    this.currentContext = name;
    return this;
  }

  withSecondContext(): this {
    this.contexts = [
      { name: 'jobrelay@worker-1', context: { cluster: 'worker-1', user: 'jobrelay' } },
      { name: 'other', context: { cluster: 'worker-1', user: 'jobrelay' } },
    ];
    return this;
  }

  without(list: 'clusters' | 'users'): this {
    this.dropped.add(list);
    return this;
  }

  build(): string {
    const doc: Fields = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'worker-1', cluster: this.cluster }],
      users: [{ ...(this.userName ? { name: this.userName } : {}), user: this.user }],
      contexts: this.contexts ?? [
        { name: 'jobrelay@worker-1', context: { cluster: this.contextCluster, user: 'jobrelay' } },
      ],
    };
    if (this.currentContext !== undefined) doc['current-context'] = this.currentContext;
    for (const list of this.dropped) delete doc[list];
    return stringify(doc);
  }
}

const valid = () => KubeconfigBuilder.valid();
const malformed = activeReasons.kubeconfigMalformed;
const unsafe = activeReasons.kubeconfigUnsafe;

interface BadCase {
  name: string;
  text: string;
  reason: ActiveReason;
  fragment: string;
}

const badCases: BadCase[] = [
  {
    name: 'malformed YAML (on the line holding the token)',
    text: valid().build().replace(`token: ${TOKEN}`, `token: "${TOKEN}\n  : [`),
    reason: malformed,
    fragment: 'is not valid YAML (line',
  },
  {
    // The YAML parser's own message quotes this line, token included.
    name: 'malformed YAML (a stray colon after the token)',
    text: valid().build().replace(`token: ${TOKEN}`, `token: ${TOKEN}: ${PASSWORD}`),
    reason: malformed,
    fragment: 'is not valid YAML (line',
  },
  {
    name: 'malformed YAML (the token given twice)',
    text: valid()
      .build()
      .replace(/^( *)token: (.*)$/m, '$1token: $2\n$1token: $2'),
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
  { name: 'a YAML scalar, not a mapping', text: `${TOKEN}\n`, reason: malformed, fragment: 'no clusters' },
  {
    name: 'no clusters list',
    text: valid().without('clusters').build(),
    reason: malformed,
    fragment: 'no clusters or users lists',
  },
  {
    name: 'no users list',
    text: valid().without('users').build(),
    reason: malformed,
    fragment: 'no clusters or users lists',
  },
  {
    name: 'no current-context and more than one context',
    text: valid().withSecondContext().withCurrentContext(undefined).build(),
    reason: malformed,
    fragment: 'has no current-context',
  },
  {
    name: 'current-context naming a missing context',
    text: valid().withCurrentContext('someone@elsewhere').build(),
    reason: malformed,
    fragment: 'names no context',
  },
  {
    name: 'context naming a missing cluster',
    text: valid().withContextCluster('worker-9').build(),
    reason: malformed,
    fragment: 'names cluster "worker-9", which is not in the kubeconfig',
  },
  {
    name: 'missing server',
    text: valid().withoutClusterField('server').build(),
    reason: malformed,
    fragment: 'no valid server URL',
  },
  {
    name: 'server without a scheme',
    text: valid().withCluster({ server: 'worker-1.example.com:6443' }).build(),
    reason: malformed,
    fragment: 'no valid server URL (expected https://host:port)',
  },
  {
    name: 'http:// server',
    text: valid().withCluster({ server: 'http://worker-1.example.com:8080' }).build(),
    reason: unsafe,
    fragment: 'http://worker-1.example.com:8080 is not https',
  },
  {
    name: 'http:// server with credentials in the URL',
    text: valid()
      .withCluster({ server: `http://admin:${PASSWORD}@worker-1.example.com/?token=${TOKEN}` })
      .build(),
    reason: unsafe,
    fragment: 'the server http://worker-1.example.com is not https',
  },
  {
    name: 'insecure-skip-tls-verify',
    text: valid().withCluster({ 'insecure-skip-tls-verify': true }).build(),
    reason: unsafe,
    fragment: 'insecure-skip-tls-verify is set',
  },
  {
    name: 'certificate-authority file path',
    text: valid()
      .withoutClusterField('certificate-authority-data')
      .withCluster({ 'certificate-authority': '/etc/kubernetes/pki/ca.crt' })
      .build(),
    reason: unsafe,
    fragment: 'certificate-authority is a file path',
  },
  {
    name: 'exec credential plugin',
    text: valid()
      .withUser({
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: 'aws',
          args: ['eks', 'get-token'],
          env: [{ name: 'SECRET', value: EXEC_SECRET }],
        },
      })
      .build(),
    reason: unsafe,
    fragment: 'user field exec is not allowed',
  },
  {
    name: 'auth-provider',
    text: valid()
      .withUser({ 'auth-provider': { name: 'oidc', config: { 'id-token': AUTH_PROVIDER_TOKEN } } })
      .build(),
    reason: unsafe,
    fragment: 'user field auth-provider is not allowed',
  },
  {
    name: 'tokenFile',
    text: valid().withUser({ tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' }).build(),
    reason: unsafe,
    fragment: 'user field tokenFile is not allowed',
  },
  {
    name: 'client-certificate file',
    text: valid()
      .withUser({ 'client-certificate': '/etc/jobrelay/client.crt', 'client-key-data': KEY_DATA })
      .build(),
    reason: unsafe,
    fragment: 'user field client-certificate is not allowed',
  },
  {
    name: 'client-key file',
    text: valid()
      .withUser({ 'client-certificate-data': CERT_DATA, 'client-key': '/etc/jobrelay/client.key' })
      .build(),
    reason: unsafe,
    fragment: 'user field client-key is not allowed',
  },
  {
    name: 'username/password',
    text: valid().withUser({ username: 'admin', password: PASSWORD }).build(),
    reason: unsafe,
    fragment: 'user field username is not allowed: basic authentication',
  },
  {
    name: 'password alone',
    text: valid().withUserFields({ password: PASSWORD }).build(),
    reason: unsafe,
    fragment: 'user field password is not allowed',
  },
  {
    name: 'bad base64 in client-key-data',
    text: valid().withUser({ 'client-certificate-data': CERT_DATA, 'client-key-data': BAD_BASE64 }).build(),
    reason: malformed,
    fragment: 'client-key-data is not valid base64',
  },
  {
    name: 'bad base64 in client-certificate-data',
    text: valid()
      .withUser({ 'client-certificate-data': 'not base64 at all', 'client-key-data': KEY_DATA })
      .build(),
    reason: malformed,
    fragment: 'client-certificate-data is not valid base64',
  },
  {
    name: 'bad base64 in certificate-authority-data',
    text: valid()
      .withCluster({ 'certificate-authority-data': `${CA_DATA.slice(0, -3)}` })
      .build(),
    reason: malformed,
    fragment: 'certificate-authority-data is not valid base64',
  },
  {
    name: 'an unnamed user',
    text: valid().withUnnamedUser().build(),
    reason: malformed,
    fragment: 'which is not in the kubeconfig',
  },
];

describe('loadWorkerKubeconfig refuses', () => {
  it('a table of at least 15 distinct cases', () => {
    expect(new Set(badCases.map((c) => c.name)).size).toBe(badCases.length);
    expect(badCases.length).toBeGreaterThanOrEqual(15);
  });

  it.each(badCases)('$name: $reason', ({ text, reason, fragment }) => {
    const result = loadWorkerKubeconfig(text);
    expect(result).toMatchObject({ ok: false, reason });
    if (result.ok) return;
    expect(result.message).toContain(fragment);
    for (const secret of secrets) expect(result.message).not.toContain(secret);
  });
});

describe('loadWorkerKubeconfig accepts', () => {
  it('an inline token over verified https', () => {
    const result = loadWorkerKubeconfig(valid().build());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.server).toBe('https://worker-1.example.com:6443');
    expect(result.kubeConfig.getCurrentContext()).toBe('jobrelay@worker-1');
    expect(result.kubeConfig.getCurrentCluster()?.server).toBe('https://worker-1.example.com:6443');
    expect(result.kubeConfig.getCurrentCluster()?.skipTLSVerify).toBe(false);
    expect(result.kubeConfig.getCurrentUser()?.token).toBe(TOKEN);
  });

  it('client-certificate-data and client-key-data', () => {
    const result = loadWorkerKubeconfig(
      valid().withUser({ 'client-certificate-data': CERT_DATA, 'client-key-data': KEY_DATA }).build(),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.kubeConfig.getCurrentUser()).toMatchObject({ certData: CERT_DATA, keyData: KEY_DATA });
  });

  it('base64 data wrapped over several lines, as some tools write it', () => {
    const wrapped = KEY_DATA.replace(/(.{40})/g, '$1\n');
    expect(wrapped).toContain('\n');
    const result = loadWorkerKubeconfig(
      valid().withUser({ 'client-certificate-data': CERT_DATA, 'client-key-data': wrapped }).build(),
    );
    expect(result.ok).toBe(true);
  });

  it('a single context without current-context, which becomes the current one', () => {
    const result = loadWorkerKubeconfig(valid().withCurrentContext(undefined).build());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.kubeConfig.getCurrentContext()).toBe('jobrelay@worker-1');
    expect(result.kubeConfig.getCurrentUser()?.token).toBe(TOKEN);
  });

  it('the named current-context among several', () => {
    const result = loadWorkerKubeconfig(valid().withSecondContext().withCurrentContext('other').build());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.kubeConfig.getCurrentContext()).toBe('other');
  });

  it('a server URL with a path, reporting only its origin', () => {
    const result = loadWorkerKubeconfig(
      valid().withCluster({ server: 'https://gateway.example.com:443/k8s/clusters/c-1' }).build(),
    );
    expect(result).toMatchObject({ ok: true, server: 'https://gateway.example.com' });
  });
});

describe('a context naming a user that is not there', () => {
  it('is malformed, not silently anonymous', async () => {
    const { loadWorkerKubeconfig } = await import('../src/load-worker-kubeconfig.ts');
    const result = loadWorkerKubeconfig(
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]',
        'users: [{name: someone, user: {token: abc}}]',
        'contexts: [{name: x, context: {cluster: c, user: missing}}]',
        'current-context: x',
      ].join('\n'),
    );
    expect(result).toMatchObject({ ok: false, reason: 'KubeconfigMalformed' });
    expect(result.ok ? '' : result.message).toContain('"missing"');
  });
});

describe('client certificate validity and exec plugins', () => {
  const fixture = (name: string) =>
    readFileSync(new URL(`./fixtures/${name}`, import.meta.url)).toString('base64');
  const kubeconfigWith = (user: string) =>
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]',
      `users: [{name: u, user: ${user}}]`,
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
    ].join('\n');

  it('names an expired client certificate before any connection', async () => {
    const { loadWorkerKubeconfig } = await import('../src/load-worker-kubeconfig.ts');
    const result = loadWorkerKubeconfig(
      kubeconfigWith(
        `{client-certificate-data: ${fixture('expired-client.crt')}, client-key-data: ${Buffer.from('k').toString('base64')}}`,
      ),
    );
    expect(result).toMatchObject({ ok: false, reason: 'CertificateExpired' });
    expect(result.ok ? '' : result.message).toMatch(/^the client certificate expired on \d{4}-\d\d-\d\dT/);
  });

  it('accepts a certificate that is still valid', async () => {
    const { loadWorkerKubeconfig } = await import('../src/load-worker-kubeconfig.ts');
    const result = loadWorkerKubeconfig(
      kubeconfigWith(
        `{client-certificate-data: ${fixture('valid-client.crt')}, client-key-data: ${Buffer.from('k').toString('base64')}}`,
      ),
    );
    expect(result.ok).toBe(true);
  });

  it('refuses exec plugins unless explicitly allowed', async () => {
    const { loadWorkerKubeconfig } = await import('../src/load-worker-kubeconfig.ts');
    const exec = kubeconfigWith('{exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}}');
    expect(loadWorkerKubeconfig(exec)).toMatchObject({ ok: false, reason: 'KubeconfigUnsafe' });
    expect(loadWorkerKubeconfig(exec, { allowExecPlugins: true }).ok).toBe(true);
  });
});
