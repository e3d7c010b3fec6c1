// Which dispatched kind a placement task is for. Redis holds whatever was queued (by another
// version, or by hand): a task must name a kind this controller dispatches, and nothing is
// guessed for one that does not.
import type { PlacementTask } from '@jobrelay/placement';

export type TaskKind<K> = { kind: 'known'; dispatched: K } | { kind: 'refused'; message: string };

export function placementTaskKind<K>(task: PlacementTask, dispatched: ReadonlyMap<string, K>): TaskKind<K> {
  const named: unknown = task.kind;
  const key = `${task.namespace}/${task.name}`;
  if (typeof named !== 'string' || named === '') {
    return {
      kind: 'refused',
      message: `placement task for ${key} names no kind: dropped (the workload's reconcile queues it again, with its kind)`,
    };
  }
  const found = dispatched.get(named);
  if (found === undefined) {
    return {
      kind: 'refused',
      message: `placement task for ${key} names kind ${JSON.stringify(named)}, which this controller does not dispatch (--kinds ${[...dispatched.keys()].join(',')}): dropped`,
    };
  }
  return { kind: 'known', dispatched: found };
}
