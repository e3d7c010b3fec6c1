import { describe, expect, it } from 'vitest';
import { printableConfig, redactUrlCredentials } from '../src/log-redaction.ts';

describe('redactUrlCredentials', () => {
  it.each([
    ['redis://:s3cret@redis:6379', 'redis://:***@redis:6379'],
    ['rediss://default:s3cret@redis.example.com:6380/0', 'rediss://default:***@redis.example.com:6380/0'],
    ['redis://tokenonly@redis:6379', 'redis://***@redis:6379'],
    ['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379'],
    ['redis://redis:6379/0?name=a@b', 'redis://redis:6379/0?name=a@b'],
  ])('%s is printed as %s', (url, printed) => {
    expect(redactUrlCredentials(url)).toBe(printed);
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
});
