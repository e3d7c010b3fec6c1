// A new leader's wait for its own capacity view, apart from the controller's lifecycle that
// calls it once per term: it only polls the registry.
import type { WorkerClusterRegistry } from '@jobrelay/clusters';
import type { Clock } from '@jobrelay/kube';
import type { Logger } from 'pino';

/** A list of 10,000 pods takes a few seconds; a minute means the watch is failing. */
const capacityViewLimitMs = 60_000;

/**
 * Waits until this replica's own pod and node watches have synced for every Active worker: a
 * new leader places nothing before. The capacity a follower read (published by the old leader)
 * may be stale, and a cluster whose capacity is "not known yet" is no candidate, so deciding
 * early would send every workload to the clusters listed first. Bounded: a worker whose pods
 * cannot be listed (the watch keeps failing) stays "not known" and gets nothing until it can.
 * `waiting` is told when the wait starts (its start) and ends (undefined), for the gauge.
 */
export async function waitForCapacityView(options: {
  registry: Pick<WorkerClusterRegistry, 'capacityNotSynced'>;
  clock: Clock;
  log: Logger;
  stopping: () => boolean;
  waiting: (since: number | undefined) => void;
}): Promise<void> {
  const { registry, clock, log } = options;
  const started = clock.now();
  let pending = registry.capacityNotSynced();
  if (pending.length === 0) {
    log.info({ waitedMs: 0 }, 'capacity of every Active worker synced: placing');
    return;
  }
  options.waiting(started);
  log.info(
    { clusters: pending },
    'waiting for the capacity watches of Active workers to sync before placing',
  );
  while (pending.length > 0 && !options.stopping() && clock.now() - started < capacityViewLimitMs) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    pending = registry.capacityNotSynced();
  }
  options.waiting(undefined);
  const waitedMs = clock.now() - started;
  if (pending.length === 0) log.info({ waitedMs }, 'capacity of every Active worker synced: placing');
  else
    log.warn(
      { waitedMs, clusters: pending },
      'capacity watches still not synced: placing, with nothing placed on these clusters until they are',
    );
}
