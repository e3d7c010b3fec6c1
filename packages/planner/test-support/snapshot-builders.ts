// Builders for planner tests, in the shape of Kueue's workload_test.go: a snapshot and a
// fixed clock in, actions out. Every builder returns a fresh object, so cases never share state.

import type { Job, JobStatus } from '@jobrelay/kinds';
import { batchJobAdapter } from '@jobrelay/kinds';
import { defaultManagedBy, originLabel, originUidLabel, placementAttemptAnnotation } from '@jobrelay/mirror';
import { nothingCarried, type ParsedPlacement, type PlacementRecord } from '@jobrelay/placement';
import type { ClusterSnapshot, OriginSnapshot, PlannerConfig } from '../src/index.ts';

export const now = Date.parse('2026-12-01T10:00:00Z');
export const originId = 'mgmt-1';
export const config: PlannerConfig = { originId, workerLostTimeoutMs: 60_000, mirrorRetentionMs: 30_000 };
export const adapter = batchJobAdapter;

/** `offset` seconds from now, as the RFC 3339 string a time field or a record holds. */
export function seconds(offset: number): string {
  return new Date(now + offset * 1000).toISOString();
}

export function originJob(options: { uid?: string; spec?: Job['spec']; status?: JobStatus } = {}): Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: 'train',
      namespace: 'team-a',
      uid: options.uid ?? 'uid-1',
      resourceVersion: '7',
      generation: 1,
    },
    spec: {
      managedBy: defaultManagedBy,
      completions: 3,
      parallelism: 3,
      backoffLimit: 6,
      completionMode: 'NonIndexed',
      suspend: false,
      template: {
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'main', image: 'busybox', resources: { requests: { cpu: '500m' } } }],
        },
      },
      ...options.spec,
    },
    ...(options.status ? { status: options.status } : {}),
  };
}

export function record(overrides: Partial<PlacementRecord> = {}): PlacementRecord {
  return { cluster: 'worker-1', attempt: 1, carried: nothingCarried, excludedClusters: [], ...overrides };
}

/** A mirror of `origin` as a worker holds it (our labels, attempt), with a worker UID. */
export function mirrorOf(
  origin: Job,
  options: {
    attempt?: number;
    uid?: string;
    originUid?: string;
    originId?: string;
    status?: JobStatus;
  } = {},
): Job {
  const built = adapter.buildMirror(origin, {
    originId,
    attempt: options.attempt ?? 1,
    carried: nothingCarried,
    now: new Date(now),
  });
  built.metadata!.uid = options.uid ?? 'mirror-uid-1';
  built.metadata!.labels![originUidLabel] = options.originUid ?? origin.metadata!.uid!;
  built.metadata!.labels![originLabel] = options.originId ?? originId;
  built.metadata!.annotations![placementAttemptAnnotation] = String(options.attempt ?? 1);
  if (options.status) built.status = options.status;
  return built;
}

/** A Job of the same name that jobrelay did not create. */
export function foreignJob(origin: Job): Job {
  return {
    ...structuredClone(origin),
    metadata: { name: origin.metadata!.name, namespace: origin.metadata!.namespace, uid: 'foreign-uid' },
  };
}

export function cluster(name: string, overrides: Partial<ClusterSnapshot<Job>> = {}): ClusterSnapshot<Job> {
  return {
    name,
    registered: true,
    connected: true,
    active: true,
    reason: 'Connected',
    inactiveSince: undefined,
    drain: false,
    mirror: undefined,
    ...overrides,
  };
}

export function present(
  origin: Job,
  placement: PlacementRecord | ParsedPlacement | undefined,
  clusters: ClusterSnapshot<Job>[],
): OriginSnapshot<Job> {
  const parsed: ParsedPlacement =
    placement === undefined
      ? { kind: 'none' }
      : 'kind' in placement
        ? placement
        : { kind: 'ok', record: placement };
  return { kind: 'present', key: 'team-a/train', origin, placement: parsed, clusters };
}
