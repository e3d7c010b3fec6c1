import { lookup } from 'node:dns/promises';
import { type RequestOptions, request } from 'node:https';
import { createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { makeClusterApiClients, UndiciWatch } from '@jobrelay/kube';
import { type KubeConfig, VersionApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { classifyConnectionError } from '../src/classify-connection-error.ts';
import { kubeconfigPolicyOf, kubeconfigPolicyProblem } from '../src/kubeconfig-policy.ts';
import { loadWorkerKubeconfig } from '../src/load-worker-kubeconfig.ts';
import {
  cidrProblem,
  ServerAddressDeniedError,
  ServerAddressDenyList,
} from '../src/server-address-deny-list.ts';

describe('cidrProblem', () => {
  it.each([
    ['10.96.0.0/12', undefined],
    ['0.0.0.0/0', undefined],
    ['fd00::/108', undefined],
    ['::/0', undefined],
    ['10.96.0.0', 'needs a prefix length from 0 to 32'],
    ['10.96.0.0/33', 'needs a prefix length from 0 to 32 (e.g. 10.96.0.0/16)'],
    ['fd00::/129', 'needs a prefix length from 0 to 128'],
    ['10.96.0.0/-1', 'needs a prefix length'],
    ['10.96.0.0/1a', 'needs a prefix length'],
    ['pods/16', 'is not a CIDR (expected e.g. 10.96.0.0/12 or fd00::/108)'],
    ['', 'is not a CIDR'],
  ])('%j: %s', (cidr, problem) => {
    const found = cidrProblem(cidr);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });
});

describe('ServerAddressDenyList.rangeOf', () => {
  const denyList = new ServerAddressDenyList(['10.244.0.0/16', '10.96.0.0/12', 'fd00:10:244::/56']);
  it.each([
    ['127.0.0.1', '127.0.0.0/8'],
    ['127.255.255.254', '127.0.0.0/8'],
    ['::1', '::1/128'],
    ['[::1]', '::1/128'],
    ['::ffff:127.0.0.1', '127.0.0.0/8'],
    ['::ffff:7f00:1', '127.0.0.0/8'],
    ['0.0.0.0', '0.0.0.0/8'],
    ['::', '::/128'],
    ['169.254.169.254', '169.254.0.0/16'],
    ['fe80::1', 'fe80::/10'],
    ['fe80::1%eth0', 'fe80::/10'],
    ['10.244.3.7', '10.244.0.0/16'],
    ['10.100.0.10', '10.96.0.0/12'],
    ['::ffff:10.96.0.1', '10.96.0.0/12'],
    ['fd00:10:244::5', 'fd00:10:244::/56'],
    ['10.0.0.1', undefined],
    ['10.112.0.1', undefined],
    ['192.168.1.1', undefined],
    ['2001:db8::1', undefined],
    ['fec0::1', undefined],
    ['worker-1.example.com', undefined],
  ])('%s: %s', (address, cidr) => {
    expect(denyList.rangeOf(address)?.cidr).toBe(cidr);
  });

  it('refuses to be built from a bad CIDR, naming it', () => {
    expect(() => new ServerAddressDenyList(['10.0.0.0/40'])).toThrow('"10.0.0.0/40" needs a prefix length');
  });
});

describe('kubeconfigPolicyOf', () => {
  const off = {
    allowExecPlugins: false,
    allowProxyUrl: false,
    restrictServerAddresses: false,
    deniedServerCidrs: [],
  };

  it('denies nothing by default', () => {
    expect(kubeconfigPolicyOf(off)).toEqual({ allowExecPlugins: false, allowProxyUrl: false });
    expect(kubeconfigPolicyProblem(off)).toBeUndefined();
  });

  it('denies the built-in ranges and the listed ones once restricted', () => {
    const policy = kubeconfigPolicyOf({
      ...off,
      restrictServerAddresses: true,
      deniedServerCidrs: ['10.96.0.0/12'],
    });
    expect(policy.serverAddressDenyList?.rangeOf('127.0.0.1')?.why).toBe('loopback');
    expect(policy.serverAddressDenyList?.rangeOf('10.96.0.1')?.why).toBe('--denied-server-cidrs');
  });

  it('says that CIDRs without the restriction would do nothing', () => {
    expect(kubeconfigPolicyProblem({ ...off, deniedServerCidrs: ['10.96.0.0/12'] })).toContain(
      'is checked only with --restrict-server-addresses=true',
    );
  });
});

// Host names are checked where connections are made, not only when the kubeconfig is vetted:
// a name's answer can change after vetting (DNS rebinding). This machine's own host name stands
// in for a name that resolves to a denied address; a plain TCP server there counts connections.
describe('a server host name resolving to a denied address', () => {
  let server: Server;
  let connections = 0;
  let port: number;
  let address: string;
  const host = hostname();

  beforeAll(async () => {
    ({ address } = await lookup(host));
    server = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, address, resolve));
    port = (server.address() as { port: number }).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  function load(options: { denied: boolean; withCa: boolean }): KubeConfig {
    const text = stringify({
      clusters: [
        {
          name: 'c',
          cluster: {
            server: `https://${host}:${port}`,
            ...(options.withCa
              ? { 'certificate-authority-data': Buffer.from('not a real CA, never used').toString('base64') }
              : {}),
          },
        },
      ],
      users: [{ name: 'u', user: { token: 'never-sent' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    });
    const denyList = new ServerAddressDenyList([`${address}/${address.includes(':') ? 128 : 32}`]);
    const loaded = loadWorkerKubeconfig(text, options.denied ? { serverAddressDenyList: denyList } : {});
    if (!loaded.ok) throw new Error(loaded.message);
    return loaded.kubeConfig;
  }

  /** Every way jobrelay connects to a worker with its KubeConfig; each settles with its error. */
  const connectors: Record<string, (kubeConfig: KubeConfig) => Promise<unknown>> = {
    'the shared pool (makeClusterApiClients)': (kubeConfig) =>
      makeClusterApiClients(kubeConfig, { qps: 100, burst: 100, requestTimeoutMs: 5_000 })
        .version.getCode()
        .then(
          () => undefined,
          (err: unknown) => err,
        ),
    'a watch (UndiciWatch)': async (kubeConfig) => {
      const done = new Promise<unknown>((resolve) => {
        new UndiciWatch(kubeConfig)
          .watch(
            '/api/v1/pods',
            {},
            () => {},
            (err) => resolve(err),
          )
          .catch(resolve);
      });
      return done;
    },
    "client-node's own client": (kubeConfig) =>
      kubeConfig
        .makeApiClient(VersionApi)
        .getCode()
        .then(
          () => undefined,
          (err: unknown) => err,
        ),
    'node:https with applyToHTTPSOptions (pod logs)': async (kubeConfig) => {
      const options: RequestOptions = {};
      await kubeConfig.applyToHTTPSOptions(options);
      return new Promise((resolve) => {
        const sent = request(`https://${host}:${port}/api/v1/namespaces/a/pods/b/log`, options);
        sent.on('error', resolve);
        sent.on('response', () => resolve(undefined));
        sent.end();
      });
    },
  };

  for (const withCa of [true, false]) {
    for (const [name, connect] of Object.entries(connectors)) {
      it(`is refused before connecting through ${name}${withCa ? '' : ' (no CA of its own)'}`, async () => {
        const before = connections;
        const err = await connect(load({ denied: true, withCa }));
        expect(connections).toBe(before);
        const chain: unknown[] = [];
        for (let cause = err; cause; cause = (cause as { cause?: unknown }).cause) chain.push(cause);
        expect(
          chain.some((cause) => cause instanceof ServerAddressDeniedError),
          String(err),
        ).toBe(true);
        const classified = classifyConnectionError(err, `https://${host}:${port}`);
        expect(classified.reason).toBe('KubeconfigUnsafe');
        expect(classified.message).toContain(`was not contacted: ${host} resolves to ${address}, in `);
        expect(classified.message).not.toContain('never-sent');

        // The same kubeconfig without the deny-list connects (and fails the TLS handshake).
        await connect(load({ denied: false, withCa }));
        expect(connections).toBeGreaterThan(before);
      });
    }
  }
});
