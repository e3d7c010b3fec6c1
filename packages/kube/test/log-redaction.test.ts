import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { printableConfig, redactUrlCredentials } from '../src/log-redaction.ts';

/** Passwords as people write them, with every character a URL gives a meaning to. */
const awkwardPasswords = [
  'p@ss',
  'a:b:c',
  's/l/a/s/h',
  'h#sh',
  '100%',
  '%zz%40',
  'q?x=1&y',
  'a@b:c/d#e%f?g',
  ' sp ace ',
];

describe('redactUrlCredentials', () => {
  it.each([
    ['redis://:s3cret@redis:6379', 'redis://:***@redis:6379'],
    ['rediss://default:s3cret@redis.example.com:6380/0', 'rediss://default:***@redis.example.com:6380/0'],
    ['redis://tokenonly@redis:6379', 'redis://***@redis:6379'],
    ['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379'],
    // The last @ ends the credentials: a raw @ in a password is masked with the rest of it.
    ['redis://:p@ss@redis:6379', 'redis://:***@redis:6379'],
    ['redis://app:a@b:c/d#e%f?g@redis:6379/2', 'redis://app:***@redis:6379/2'],
    ['redis+sentinel://:p@ss@s1:26379,s2:26379/mymaster', 'redis+sentinel://:***@s1:26379,s2:26379/mymaster'],
    ['rediss+cluster://app:p%40ss@n1:7000,n2:7001', 'rediss+cluster://app:***@n1:7000,n2:7001'],
    // A user name that is not plain may be part of a password: masked whole.
    ['redis://us/er:pw@redis:6379', 'redis://***@redis:6379'],
    // An @ in a query masks more than the credentials, never less.
    ['redis://redis:6379/0?name=a@b', 'redis://redis:***@b'],
  ])('%s is printed as %s', (url, printed) => {
    expect(redactUrlCredentials(url)).toBe(printed);
  });

  it.each(awkwardPasswords)(
    'masks the password %j whole, raw or percent-encoded, in every URL form',
    (password) => {
      for (const written of [password, encodeURIComponent(password)])
        for (const [url, printed] of [
          [`redis://:${written}@redis:6379`, 'redis://:***@redis:6379'],
          [`rediss://app:${written}@redis:6380/1`, 'rediss://app:***@redis:6380/1'],
          [
            `redis+sentinel://:${written}@s1:26379,s2/mymaster/0`,
            'redis+sentinel://:***@s1:26379,s2/mymaster/0',
          ],
          [`redis+cluster://app:${written}@n1:7000,n2`, 'redis+cluster://app:***@n1:7000,n2'],
        ] as const)
          expect(redactUrlCredentials(url), url).toBe(printed);
    },
  );

  it('prints the same masked URL whatever the password holds', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), fc.boolean(), (password, encode) => {
        const written = encode ? encodeURIComponent(password) : password;
        expect(redactUrlCredentials(`redis://app:${written}@redis:6379/0`)).toBe(
          'redis://app:***@redis:6379/0',
        );
        expect(redactUrlCredentials(`redis+sentinel://:${written}@s1,s2/m`)).toBe(
          'redis+sentinel://:***@s1,s2/m',
        );
      }),
    );
  });
});

describe('printableConfig', () => {
  it('masks a password in any URL setting and keeps every other value', () => {
    const config = {
      redisUrl: 'redis://:hunter2@redis:6379',
      logLevel: 'info',
      namespaces: ['a'],
      workerQps: 50,
    };
    const printed = printableConfig(config);
    expect(printed).toEqual({ ...config, redisUrl: 'redis://:***@redis:6379' });
    expect(JSON.stringify(printed)).not.toContain('hunter2');
  });

  it('masks a password with @, :, /, #, % and ? whole, also inside a list', () => {
    const password = 'a@b:c/d#e%f?g';
    const printed = JSON.stringify(
      printableConfig({
        redisUrl: `redis://:${password}@redis:6379`,
        urls: [`redis+sentinel://:${encodeURIComponent(password)}@s1/m`],
      }),
    );
    expect(printed).toBe(
      JSON.stringify({ redisUrl: 'redis://:***@redis:6379', urls: ['redis+sentinel://:***@s1/m'] }),
    );
  });
});
