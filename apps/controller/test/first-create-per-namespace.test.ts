import { describe, expect, it } from 'vitest';
import { FirstCreatePerNamespace } from '../src/mirror-operations.ts';

/** A create the test finishes by hand; `started` counts the creates sent. */
function creates() {
  const pending: Array<{ resolve: (outcome: string) => void; reject: (err: Error) => void }> = [];
  const state = { started: 0 };
  const create = () =>
    new Promise<string>((resolve, reject) => {
      state.started += 1;
      pending.push({ resolve, reject });
    });
  return { state, pending, create };
}

const present = (outcome: string) => outcome !== 'namespace-missing';
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('FirstCreatePerNamespace', () => {
  it('sends the first create into a namespace alone, then the waiting ones', async () => {
    const gate = new FirstCreatePerNamespace();
    const { state, pending, create } = creates();
    const results = [1, 2, 3].map(() => gate.run('worker-1', 'team-a', create, present));
    await settle();
    expect(state.started).toBe(1);
    pending[0]!.resolve('created');
    await settle();
    expect(state.started).toBe(3);
    pending[1]!.resolve('created');
    pending[2]!.resolve('adopted');
    expect(await Promise.all(results)).toEqual(['created', 'created', 'adopted']);
  });

  it('sends at once into a namespace a create found present, and waits for none elsewhere', async () => {
    const gate = new FirstCreatePerNamespace();
    const { state, pending, create } = creates();
    const first = gate.run('worker-1', 'team-a', create, present);
    await settle();
    pending[0]!.resolve('created');
    await first;
    void gate.run('worker-1', 'team-a', create, present);
    void gate.run('worker-1', 'team-a', create, present);
    // Another worker, another namespace: each has its own first create.
    void gate.run('worker-2', 'team-a', create, present);
    void gate.run('worker-1', 'team-b', create, present);
    await settle();
    expect(state.started).toBe(5);
  });

  it('lets the waiting creates go when the first failed, and keeps the next first alone', async () => {
    const gate = new FirstCreatePerNamespace();
    const { state, pending, create } = creates();
    const first = gate.run('worker-1', 'team-a', create, present);
    const waiting = gate.run('worker-1', 'team-a', create, present);
    await settle();
    pending[0]!.reject(new Error('connection reset'));
    await expect(first).rejects.toThrow('connection reset');
    await settle();
    expect(state.started).toBe(2);
    pending[1]!.resolve('namespace-missing');
    expect(await waiting).toBe('namespace-missing');
    // Nothing learned the namespace is there: the next create goes alone again.
    void gate.run('worker-1', 'team-a', create, present);
    void gate.run('worker-1', 'team-a', create, present);
    await settle();
    expect(state.started).toBe(3);
  });

  it('starts over when it remembers too many namespaces', async () => {
    const gate = new FirstCreatePerNamespace(2);
    const { state, pending, create } = creates();
    for (const namespace of ['a', 'b', 'c']) {
      const done = gate.run('worker-1', namespace, create, present);
      await settle();
      pending.at(-1)!.resolve('created');
      await done;
    }
    // 'a' and 'b' were forgotten when 'c' was remembered: a create into 'a' goes alone again.
    void gate.run('worker-1', 'a', create, present);
    void gate.run('worker-1', 'a', create, present);
    void gate.run('worker-1', 'c', create, present);
    await settle();
    expect(state.started).toBe(3 + 1 + 1);
  });
});
