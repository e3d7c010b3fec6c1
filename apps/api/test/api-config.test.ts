import { describe, expect, it } from 'vitest';
import { apiUsage, ConfigError, loadApiConfig } from '../src/api-config.ts';

describe('loadApiConfig', () => {
  it('takes flags over JOBRELAY_* variables over defaults', () => {
    const config = loadApiConfig(['--address', '127.0.0.1:9000'], {
      JOBRELAY_ADDRESS: '127.0.0.1:1',
      JOBRELAY_AUTH_CACHE_SECONDS: '3',
    });
    expect(config).toMatchObject({
      address: '127.0.0.1:9000',
      authCacheSeconds: 3,
      redisUrl: 'redis://127.0.0.1:6379',
    });
  });

  it('refuses plain HTTP off loopback unless told, and half a TLS pair', () => {
    expect(() => loadApiConfig(['--address', '0.0.0.0:8090'], {})).toThrow(/not loopback/);
    expect(
      loadApiConfig(['--address', '0.0.0.0:8090', '--allow-insecure-http', 'true'], {}).allowInsecureHttp,
    ).toBe(true);
    expect(loadApiConfig(['--address', '[::1]:8090'], {}).address).toBe('[::1]:8090');
    expect(() => loadApiConfig(['--tls-cert-file', 'a.crt'], {})).toThrow(/go together/);
    expect(
      loadApiConfig(['--address', '0.0.0.0:8443', '--tls-cert-file', 'a', '--tls-key-file', 'b'], {})
        .tlsKeyFile,
    ).toBe('b');
  });

  it('names the flag of every bad value, and keeps the auth cache at 10 s or less', () => {
    const error = (() => {
      try {
        loadApiConfig(
          ['--auth-cache-seconds', '60', '--redis-url', 'http://x', '--allow-exec-plugins', 'maybe'],
          {},
        );
      } catch (err) {
        return err as Error;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error?.message).toContain('--auth-cache-seconds');
    expect(error?.message).toContain('--redis-url');
    expect(error?.message).toContain('--allow-exec-plugins');
    expect(() => loadApiConfig(['--no-such-flag'], {})).toThrow(ConfigError);
  });

  it('takes the kubeconfig policy: proxies, exec plugins and denied server addresses, all off by default', () => {
    expect(loadApiConfig([], {})).toMatchObject({
      allowExecPlugins: false,
      allowProxyUrl: false,
      restrictServerAddresses: false,
      deniedServerCidrs: [],
    });
    expect(
      loadApiConfig(
        [
          '--allow-proxy-url=true',
          '--restrict-server-addresses',
          'true',
          '--denied-server-cidrs',
          '10.244.0.0/16, 10.96.0.0/12',
        ],
        {},
      ),
    ).toMatchObject({
      allowProxyUrl: true,
      restrictServerAddresses: true,
      deniedServerCidrs: ['10.244.0.0/16', '10.96.0.0/12'],
    });
    expect(() => loadApiConfig(['--denied-server-cidrs', '10.96.0.0/12,10.244.0.0'], {})).toThrow(
      '--denied-server-cidrs: "10.244.0.0" needs a prefix length from 0 to 32',
    );
    expect(() => loadApiConfig(['--denied-server-cidrs', '10.96.0.0/12'], {})).toThrow(
      '--denied-server-cidrs is checked only with --restrict-server-addresses=true',
    );
  });

  it('documents every flag in --help', () => {
    for (const flag of [
      '--kubeconfig',
      '--address',
      '--tls-cert-file',
      '--tls-key-file',
      '--auth-cache-seconds',
      '--rate-limit-per-minute',
      '--body-limit-bytes',
      '--request-timeout-seconds',
      '--managed-by',
      '--kinds',
      '--kind-managed-by',
      '--generic-kinds-file',
      '--allow-exec-plugins',
      '--allow-proxy-url',
      '--restrict-server-addresses',
      '--denied-server-cidrs',
      '--token-audiences',
      '--failed-authentications-per-minute',
      '--max-streams-per-identity',
      '--max-open-streams',
      '--max-stream-seconds',
      '--stream-buffer-bytes',
    ])
      expect(apiUsage).toContain(flag);
  });

  it('reads the stream and abuse limits, with their defaults', () => {
    expect(loadApiConfig([], {})).toMatchObject({
      tokenAudiences: [],
      failedAuthenticationsPerMinute: 60,
      maxStreamsPerIdentity: 16,
      maxOpenStreams: 1000,
      maxStreamSeconds: 3600,
      streamBufferBytes: 1024 * 1024,
    });
    expect(
      loadApiConfig(
        [
          '--token-audiences',
          'jobrelay-api, https://jobrelay.example',
          '--max-streams-per-identity',
          '4',
          '--max-stream-seconds',
          '60',
        ],
        { JOBRELAY_FAILED_AUTHENTICATIONS_PER_MINUTE: '5' },
      ),
    ).toMatchObject({
      tokenAudiences: ['jobrelay-api', 'https://jobrelay.example'],
      maxStreamsPerIdentity: 4,
      maxStreamSeconds: 60,
      failedAuthenticationsPerMinute: 5,
    });
  });

  it.each([
    ['--max-streams-per-identity', '0'],
    ['--max-open-streams', 'many'],
    ['--max-stream-seconds', '0'],
    ['--stream-buffer-bytes', '1024'],
    ['--failed-authentications-per-minute', '-1'],
  ])('refuses %s %s, naming the flag', (flag, value) => {
    expect(() => loadApiConfig([flag, value], {})).toThrow(flag);
  });
});
