import { describe, expect, it } from 'vitest';
import { unlessConflict } from '../src/index.ts';

const apiError = (code: number, reason: string) =>
  Object.assign(new Error(`HTTP ${code}`), { code, body: JSON.stringify({ reason }) });

describe('unlessConflict', () => {
  it('passes a successful write through', async () => {
    expect(await unlessConflict(async () => 42)).toEqual({ kind: 'written', value: 42 });
  });

  it('turns a 409 Conflict into a value', async () => {
    expect(await unlessConflict(() => Promise.reject(apiError(409, 'Conflict')))).toEqual({
      kind: 'conflict',
    });
  });

  it('rethrows AlreadyExists (also a 409) and every other error', async () => {
    await expect(unlessConflict(() => Promise.reject(apiError(409, 'AlreadyExists')))).rejects.toThrow(
      'HTTP 409',
    );
    await expect(unlessConflict(() => Promise.reject(apiError(422, 'Invalid')))).rejects.toThrow('HTTP 422');
  });
});
