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
    ])
      expect(apiUsage).toContain(flag);
  });
});
