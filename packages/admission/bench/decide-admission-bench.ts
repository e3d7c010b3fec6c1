// How long one admission decision takes at the size the leader must handle: 10,000 pending
// workloads across 20 queues (4 cohorts of 5), 2,000 admitted, 8 clusters. Prints p50 and p99
// over 50 runs of the same seeded snapshot; asserts nothing (figures vary with the machine).
//
//   node packages/admission/bench/decide-admission-bench.ts

import { performance } from 'node:perf_hooks';
import type { Resources } from '@jobrelay/resources';
import { decideAdmission } from '../src/decide-admission.ts';
import type { AdmittedWorkload, ChooseCluster, QueuedWorkload, QueueSpec } from '../src/queue-model.ts';

const queueCount = 20;
const cohortSize = 5;
const pendingCount = 10_000;
const admittedCount = 2_000;
const clusterCount = 8;
const runs = 50;
const gibibyte = 2 ** 30;

/** mulberry32: a small seeded generator, so every run measures the same snapshot. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = seededRandom(42);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

const queues: QueueSpec[] = Array.from({ length: queueCount }, (_, i) => ({
  name: `queue-${i}`,
  // Room for the ~100 admitted per queue and ~50 more: most pending wait, some borrow.
  nominalQuota: { cpu: 600_000, memory: 2_400 * gibibyte, workloads: 150 },
  cohort: `cohort-${Math.floor(i / cohortSize)}`,
  ...(i % 3 === 0 ? { borrowingLimit: { cpu: 100_000 } } : {}),
  ...(i % 4 === 0 ? { lendingLimit: { cpu: 50_000 } } : {}),
  weight: 1 + (i % 3),
  queueingStrategy: i % 5 === 0 ? 'StrictFIFO' : 'BestEffortFIFO',
  preemption: {
    withinQueue: i % 2 === 0 ? 'LowerPriority' : 'Never',
    reclaimWithinCohort: pick(['Never', 'LowerPriority', 'Any'] as const),
  },
}));

function workload(uid: string): QueuedWorkload {
  const queue = pick(queues).name;
  return {
    uid,
    label: `Kind team/${uid}`,
    namespace: 'team',
    queue,
    priority: pick([0, 0, 0, 100, 1000]),
    createdAt: Math.floor(random() * 1_000_000),
    demand: {
      cpu: 500 * (1 + Math.floor(random() * 16)),
      memory: gibibyte * (1 + Math.floor(random() * 32)),
    },
  };
}

const clusters = Array.from({ length: clusterCount }, (_, i) => `cluster-${i}`);
const admitted: AdmittedWorkload[] = Array.from({ length: admittedCount }, (_, i) => ({
  ...workload(`admitted-${i}`),
  cluster: pick(clusters),
  admittedAt: Math.floor(random() * 1_000_000),
}));
const pending = Array.from({ length: pendingCount }, (_, i) => workload(`pending-${i}`));

// A cluster model in the manner of chooseWorkerCluster: the first cluster with room beside what
// is on it and what this decision assumed there.
const capacity: Resources = { cpu: 1_700_000, memory: 7_000 * gibibyte };
const onCluster = new Map<string, Resources>(clusters.map((name) => [name, { cpu: 0, memory: 0 }]));
for (const w of admitted) {
  const used = onCluster.get(w.cluster)!;
  for (const [name, value] of Object.entries(w.demand)) used[name] = (used[name] ?? 0) + value;
}
const chooseCluster: ChooseCluster = (w, assumed) => {
  for (const name of clusters) {
    const used = onCluster.get(name)!;
    const more = assumed.get(name) ?? {};
    const fits = Object.entries(w.demand).every(
      ([resource, value]) =>
        (used[resource] ?? 0) + (more[resource] ?? 0) + value <= (capacity[resource] ?? 0),
    );
    if (fits) return { kind: 'fits', cluster: name };
  }
  return {
    kind: 'no-cluster',
    message: `0/${clusters.length} clusters available: insufficient cpu or memory`,
  };
};

const snapshot = { queues, admitted, pending, chooseCluster };
const times: number[] = [];
let last = decideAdmission(snapshot);
for (let i = 0; i < runs; i += 1) {
  const start = performance.now();
  last = decideAdmission(snapshot);
  times.push(performance.now() - start);
}
times.sort((a, b) => a - b);
const percentile = (p: number) => times[Math.min(times.length - 1, Math.ceil((p / 100) * times.length) - 1)]!;
const gates = new Map<string, number>();
for (const verdict of last.waiting.values()) gates.set(verdict.gate, (gates.get(verdict.gate) ?? 0) + 1);
console.log(
  `decideAdmission: ${pendingCount} pending, ${admittedCount} admitted, ${queueCount} queues, ${clusterCount} clusters`,
);
console.log(
  `  admitted ${last.admit.length}, evicted ${last.evict.length}, waiting ${JSON.stringify(Object.fromEntries(gates))}`,
);
console.log(`  p50 ${percentile(50).toFixed(1)} ms, p99 ${percentile(99).toFixed(1)} ms over ${runs} runs`);
