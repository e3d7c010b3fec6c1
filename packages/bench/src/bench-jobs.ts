import type { PlainJson } from '@jobrelay/kube';
import { defaultManagedBy } from '@jobrelay/mirror';
import type { V1Job } from '@kubernetes/client-node';

/** A Job as the benchmark sends and sees it: plain JSON, as the controller does. */
export type BenchJob = PlainJson<V1Job>;

export const benchLabel = 'jobrelay.dev/bench-run';

/**
 * The Jobs the benchmark creates. `idle` Jobs have parallelism 0: valid, never finished, and
 * no pod is ever created for them, so throughput runs measure dispatch apart from pod
 * execution on the same two cores. The worker's Job controller still syncs each mirror
 * once (it sets startTime), so every idle Job also costs one status change to write back.
 * `short` Jobs run one KWOK pod for a second, for the end-to-end and latency runs.
 * `finishing` Jobs have completions 0 (valid; the worker's Job controller marks them Complete
 * without a pod) and ttlSecondsAfterFinished 0, so the management cluster's TTL controller
 * deletes the origin once its Complete status is synced back: the soak's whole life cycle at
 * almost no cost in pods.
 */
export function benchJob(options: {
  name: string;
  run: string;
  shape: 'idle' | 'short' | 'finishing';
  dispatched: boolean;
}): BenchJob {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: options.name, labels: { [benchLabel]: options.run } },
    spec: {
      ...(options.dispatched ? { managedBy: defaultManagedBy } : {}),
      parallelism: options.shape === 'idle' ? 0 : 1,
      completions: options.shape === 'finishing' ? 0 : 1,
      backoffLimit: 0,
      ...(options.shape === 'finishing' ? { ttlSecondsAfterFinished: 0 } : {}),
      template: {
        metadata: { annotations: { 'sandbox.jobrelay.dev/run-seconds': '1' } },
        spec: {
          restartPolicy: 'Never',
          containers: [
            {
              name: 'main',
              image: 'registry.invalid/sandbox:fake',
              command: ['true'],
              resources: { requests: { cpu: '10m', memory: '16Mi' } },
            },
          ],
        },
      },
    },
  };
}

export function benchJobNames(prefix: string, count: number): string[] {
  const width = String(count - 1).length;
  return Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(width, '0')}`);
}
