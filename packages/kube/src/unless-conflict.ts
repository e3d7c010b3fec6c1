import { isConflict } from './api-errors.ts';

export type WriteOutcome<T> = { kind: 'written'; value: T } | { kind: 'conflict' };

/**
 * The one way jobrelay meets a 409 Conflict: every write over a version it read (a
 * resourceVersion precondition) goes through here, and a conflict comes back as a value,
 * never as an error, so the caller re-reads and recomputes instead of retrying blindly or
 * logging a failure that is just optimistic concurrency at work.
 */
export async function unlessConflict<T>(write: () => Promise<T>): Promise<WriteOutcome<T>> {
  try {
    return { kind: 'written', value: await write() };
  } catch (err) {
    if (isConflict(err)) return { kind: 'conflict' };
    throw err;
  }
}
