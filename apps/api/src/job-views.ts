import type { ObjectMeta, PlainJson } from '@jobrelay/kube';
import { unschedulableAnnotation } from '@jobrelay/mirror';
import { waitingSince as attemptWaitingSince } from '@jobrelay/placement';
import type { V1Job } from '@kubernetes/client-node';
import { z } from 'zod';
import { placementOf, recordKeysVersion } from './placement-trust.ts';

export const jobPhases = ['pending', 'running', 'succeeded', 'failed', 'suspended'] as const;
export type JobPhase = (typeof jobPhases)[number];

export const jobSummarySchema = z
  .object({
    namespace: z.string(),
    name: z.string(),
    uid: z.string(),
    phase: z.enum(jobPhases),
    cluster: z.string().nullable().describe('Where it is placed now; null while it waits.'),
    attempt: z.number().int().nullable().describe('1 for the first placement, +1 per re-placement.'),
    placedAt: z.string().nullable(),
    waitingSince: z.string().nullable().describe('While unplaced: since when this attempt waits.'),
    createdAt: z.string().nullable(),
    completions: z.number().int().nullable(),
    parallelism: z.number().int().nullable(),
    active: z.number().int(),
    succeeded: z.number().int(),
    failed: z.number().int(),
    reason: z.string().nullable().describe('The terminal condition reason, or why it waits for a cluster.'),
    labels: z.record(z.string(), z.string()),
  })
  .meta({ id: 'JobSummary' });

export type JobSummary = z.infer<typeof jobSummarySchema>;

/** A dispatched Job as the origin cache holds it: plain JSON, times as RFC 3339 strings. */
export type Job = PlainJson<V1Job>;

/** Any dispatched object, of any kind: placement records and waiting live in its metadata. */
export interface Dispatched {
  metadata?: ObjectMeta | undefined;
}

export { placementOf };

function terminalCondition(job: Job) {
  return job.status?.conditions?.find(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
}

/**
 * pending: waiting for a cluster (or placed, its mirror not yet made); running: placed on a
 * cluster; succeeded / failed: the origin has its terminal condition; suspended: spec.suspend.
 */
export function jobPhase(job: Job): JobPhase {
  const terminal = terminalCondition(job);
  if (terminal) return terminal.type === 'Complete' ? 'succeeded' : 'failed';
  if (job.spec?.suspend === true) return 'suspended';
  return placementOf(job)?.cluster ? 'running' : 'pending';
}

/** While unplaced: when the current attempt started waiting for a cluster (as the controller counts it). */
export function waitingSince(object: Dispatched): string | null {
  const record = placementOf(object);
  if (record?.cluster) return null;
  return attemptWaitingSince(object, record)?.toISOString() ?? null;
}

/**
 * Why an unplaced workload waits, as the controller last said it: given up on (its mirror was
 * refused too often), refused by a worker and waiting out the delay, or fitting no cluster.
 */
export function waitingReason(object: Dispatched): string | null {
  const record = placementOf(object);
  if (record?.gaveUp !== undefined) return `jobrelay gave up on it: ${record.gaveUp}`;
  if (record?.retryAfter && !record.cluster && Date.parse(record.retryAfter) > Date.now())
    return `${record.lastReplacedBecause ?? 'a worker refused its mirror'}; placed again after ${record.retryAfter}`;
  return object.metadata?.annotations?.[unschedulableAnnotation] ?? null;
}

const summaries = new WeakMap<Job, { keys: number; summary: JobSummary }>();

/** What lists show of a dispatched Job; computed once per object version (and record keys). */
export function jobSummary(job: Job): JobSummary {
  const cached = summaries.get(job);
  if (cached?.keys === recordKeysVersion()) return cached.summary;
  const record = placementOf(job);
  const phase = jobPhase(job);
  const terminal = terminalCondition(job);
  const summary: JobSummary = {
    namespace: job.metadata?.namespace ?? '',
    name: job.metadata?.name ?? '',
    uid: job.metadata?.uid ?? '',
    phase,
    cluster: record?.cluster ?? null,
    attempt: record?.attempt ?? null,
    placedAt: record?.cluster ? (record.placedAt ?? null) : null,
    waitingSince: phase === 'pending' ? waitingSince(job) : null,
    createdAt: job.metadata?.creationTimestamp ?? null,
    completions: job.spec?.completions ?? null,
    parallelism: job.spec?.parallelism ?? null,
    active: job.status?.active ?? 0,
    succeeded: job.status?.succeeded ?? 0,
    failed: job.status?.failed ?? 0,
    reason: terminal?.reason ?? (phase === 'pending' ? waitingReason(job) : null),
    labels: job.metadata?.labels ?? {},
  };
  summaries.set(job, { keys: recordKeysVersion(), summary });
  return summary;
}

export function jobKeyOf(object: Dispatched): string {
  return `${object.metadata?.namespace}/${object.metadata?.name}`;
}
