import { describe, expect, it } from 'vitest';
import { JobrelayApiClient, plainHttpRefusal } from '../src/api-client.ts';
import { UnreachableError } from '../src/plugin-errors.ts';

describe('plainHttpRefusal: a bearer token goes over plain http only to this machine', () => {
  it.each([
    'http://127.0.0.1:8090',
    'http://127.1.2.3/',
    'http://localhost:8090/jobrelay',
    'http://LOCALHOST:1',
    'http://[::1]:8090',
    'http://[::ffff:127.0.0.1]:8090',
    'https://api.example.com',
    'https://192.0.2.10:8443',
  ])('%s is allowed', (url) => {
    expect(plainHttpRefusal(new URL(url))).toBeUndefined();
  });

  it.each([
    'http://api.example.com',
    'http://192.0.2.10:8090',
    'http://[2001:db8::1]:8090',
    'http://localhost.example.com',
    'http://127.0.0.1.nip.io',
    'http://0.0.0.0:8090',
    'http://[::ffff:192.0.2.1]/',
  ])('%s is refused, naming the URL and the fix', (url) => {
    const refusal = plainHttpRefusal(new URL(url));
    expect(refusal).toContain(new URL(url).href);
    expect(refusal).toContain('https://');
    expect(refusal).toContain('--api-url');
  });

  it('the client refuses before any connection is made', () => {
    expect(
      () => new JobrelayApiClient({ baseUrl: new URL('http://192.0.2.10:8090'), token: 'secret-token' }),
    ).toThrow(UnreachableError);
    try {
      new JobrelayApiClient({ baseUrl: new URL('http://192.0.2.10:8090'), token: 'secret-token' });
    } catch (err) {
      expect((err as Error).message).not.toContain('secret-token');
    }
  });
});
