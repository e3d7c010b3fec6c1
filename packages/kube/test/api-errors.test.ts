import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  describeApiError,
  isAlreadyExists,
  isConflict,
  isNotFound,
  reasonOf,
  refusalOf,
  statusCodeOf,
} from '../src/api-errors.ts';

const TOKEN = 'jr-token-5e1f0a9b3c77';

/** A Kubernetes Status body, as the apiserver sends it. */
function status(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message };
}

/**
 * What client-node throws: `bodyAs` picks the body as the generated client leaves it (the raw
 * JSON text) or as already parsed. The headers, and client-node's own message, carry secrets.
 */
function apiError(
  code: number,
  body: unknown,
  bodyAs: 'string' | 'object' = 'string',
): ApiException<unknown> {
  return new ApiException<unknown>(
    code,
    `request failed with Authorization: Bearer ${TOKEN}`,
    bodyAs === 'string' && typeof body !== 'string' ? JSON.stringify(body) : body,
    { authorization: `Bearer ${TOKEN}`, 'set-cookie': `session=${TOKEN}`, 'audit-id': 'a1' },
  );
}

const alreadyExists = status(409, 'AlreadyExists', 'jobs.batch "train" already exists');
const conflict = status(
  409,
  'Conflict',
  'Operation cannot be fulfilled on jobs.batch "train": the object has been modified; please apply your changes to the latest version and try again',
);
const notFound = status(404, 'NotFound', 'jobs.batch "train" not found');

describe('statusCodeOf', () => {
  it.each([
    { name: 'an ApiException', err: apiError(404, notFound), code: 404 },
    { name: 'a plain object with a numeric code', err: { code: 500 }, code: 500 },
    {
      name: 'a Node system error (string code)',
      err: Object.assign(new Error('x'), { code: 'ECONNRESET' }),
      code: undefined,
    },
    { name: 'an Error without a code', err: new Error('x'), code: undefined },
    { name: 'undefined', err: undefined, code: undefined },
    { name: 'null', err: null, code: undefined },
    { name: 'a string', err: 'HTTP 404', code: undefined },
  ])('of $name is $code', ({ err, code }) => {
    expect(statusCodeOf(err)).toBe(code);
  });
});

describe('isNotFound', () => {
  it.each([
    { err: apiError(404, notFound), expected: true },
    { err: apiError(404, ''), expected: true },
    { err: apiError(409, conflict), expected: false },
    { err: apiError(410, status(410, 'Expired', 'too old resource version')), expected: false },
    { err: Object.assign(new Error('x'), { code: '404' }), expected: false },
  ])('is $expected for $err.code', ({ err, expected }) => {
    expect(isNotFound(err)).toBe(expected);
  });
});

describe('isConflict and isAlreadyExists', () => {
  it.each([
    {
      name: 'AlreadyExists, body as JSON text',
      err: apiError(409, alreadyExists, 'string'),
      exists: true,
      conflict: false,
    },
    {
      name: 'AlreadyExists, body as an object',
      err: apiError(409, alreadyExists, 'object'),
      exists: true,
      conflict: false,
    },
    {
      name: 'Conflict, body as JSON text',
      err: apiError(409, conflict, 'string'),
      exists: false,
      conflict: true,
    },
    {
      name: 'Conflict, body as an object',
      err: apiError(409, conflict, 'object'),
      exists: false,
      conflict: true,
    },
    { name: '409 with no body', err: apiError(409, undefined), exists: false, conflict: true },
    {
      name: '409 with a body that is not JSON',
      err: apiError(409, '<html>busy</html>'),
      exists: false,
      conflict: true,
    },
    {
      name: 'AlreadyExists reason on a non-409',
      err: apiError(500, alreadyExists),
      exists: false,
      conflict: false,
    },
    { name: 'a 404', err: apiError(404, notFound), exists: false, conflict: false },
    { name: 'not an API error', err: new Error('AlreadyExists'), exists: false, conflict: false },
  ])('$name', ({ err, exists, conflict: isAConflict }) => {
    expect(isAlreadyExists(err)).toBe(exists);
    expect(isConflict(err)).toBe(isAConflict);
  });
});

describe('reasonOf', () => {
  it.each([
    { err: apiError(409, alreadyExists, 'string'), reason: 'AlreadyExists' },
    { err: apiError(409, alreadyExists, 'object'), reason: 'AlreadyExists' },
    { err: apiError(422, status(422, 'Invalid', 'spec.x: Invalid value')), reason: 'Invalid' },
    { err: apiError(502, 'Bad Gateway'), reason: undefined },
    { err: new Error('x'), reason: undefined },
  ])('is $reason', ({ err, reason }) => {
    expect(reasonOf(err)).toBe(reason);
  });
});

describe('describeApiError', () => {
  it.each([
    {
      name: "the apiserver's message with the status code (JSON text)",
      err: apiError(409, alreadyExists, 'string'),
      description: 'jobs.batch "train" already exists (HTTP 409)',
    },
    {
      name: "the apiserver's message with the status code (object)",
      err: apiError(404, notFound, 'object'),
      description: 'jobs.batch "train" not found (HTTP 404)',
    },
    {
      name: 'only the code when the body is not JSON',
      err: apiError(502, '<html>Bad Gateway</html>'),
      description: 'HTTP 502',
    },
    { name: 'only the code when there is no body', err: apiError(500, undefined), description: 'HTTP 500' },
    {
      name: 'the network code of a failed fetch',
      err: new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
      }),
      description: 'fetch failed: ECONNREFUSED',
    },
    { name: 'the message of a plain error', err: new Error('watch ended'), description: 'watch ended' },
    { name: 'anything else as text', err: 42, description: '42' },
  ])('gives $name', ({ err, description }) => {
    expect(describeApiError(err)).toBe(description);
  });

  it('never repeats headers or client-node’s own message, which carry credentials', () => {
    for (const err of [
      apiError(401, status(401, 'Unauthorized', 'Unauthorized')),
      apiError(403, 'forbidden'),
      apiError(500, undefined, 'object'),
    ]) {
      const description = describeApiError(err);
      expect(description).not.toContain(TOKEN);
      expect(description).not.toMatch(/authorization|set-cookie|audit-id|headers/i);
    }
  });
});

describe('refusalOf', () => {
  it('names a refusal of the object itself with the apiserver’s message, and nothing else', () => {
    const quota = status(403, 'Forbidden', 'jobs.batch "train" is forbidden: exceeded quota: jobs');
    expect(refusalOf(apiError(403, quota))).toEqual({ code: 403, message: quota.message });
    expect(refusalOf(apiError(422, status(422, 'Invalid', 'spec.parallelism: Invalid'), 'object'))).toEqual({
      code: 422,
      message: 'spec.parallelism: Invalid',
    });
    expect(refusalOf(apiError(413, 'request entity too large'))).toEqual({ code: 413, message: 'HTTP 413' });
    for (const code of [401, 404, 409, 429, 500, 503]) {
      expect(refusalOf(apiError(code, status(code, 'x', 'y')))).toBeUndefined();
    }
    expect(refusalOf(new Error('ECONNREFUSED'))).toBeUndefined();
  });

  it('cuts a long message to 512 characters and never carries the request’s credentials', () => {
    const refusal = refusalOf(apiError(400, status(400, 'BadRequest', 'x'.repeat(2000))))!;
    expect(refusal.message).toHaveLength(512);
    expect(JSON.stringify(refusal)).not.toContain(TOKEN);
  });
});
