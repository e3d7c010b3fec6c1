// A seeded, reproducible mix of short Jobs across every Job mode, for the status differential
// (status-differential.ts): each Job is run through jobrelay and directly on one cluster, and
// the two final statuses must be equal field by field.
//
// Only configurations whose FINAL status is decided by the spec alone are generated, never by
// timing. The built-in Job controller has real races: when a Job's outcome is decided (a back-off
// limit reached, a success policy met, a deadline passed) while other pods are still running, the
// pods that happened to end first are counted succeeded and the rest are deleted and counted
// failed; with several failing indexes and a global backoffLimit, a success in between resets the
// back-off and the retries drift apart. Each family below says why none of that can change its
// outcome. The differential still runs the direct Job twice and reports any disagreement between
// the two direct runs as a bug of this generator; nothing is ever hidden. Two families need a
// user's step in the middle, which the differential takes on every run alike: resuming a Job
// created suspended, and lowering parallelism or deleting a pod while the first pods run.
//
// Pods are KWOK's (packages/sandbox/kwok/stages.yaml): the pod template's annotations decide how
// long they run and how they exit. Every pod runs ~1 s; failures cost the Job controller's
// back-off (10 s, doubled per failure), so failure counts are kept small.
import type { V1JobSpec, V1PodFailurePolicyRule } from '@kubernetes/client-node';

export interface MixedPod {
  runSeconds?: number;
  exitCode?: number;
  failIndexes?: string;
}

/** A user's (or an evictor's) step in the middle of a run, taken on every run alike. */
export type MidRunStep =
  /** Lower spec.parallelism. */
  | { kind: 'scale-down'; parallelism: number }
  /** Delete the running pod of the lowest completion index (any, for NonIndexed). */
  | { kind: 'delete-pod' }
  /** Suspend, then resume once every run is suspended with no pod active. */
  | { kind: 'suspend-resume' };

export interface MixedJob {
  /** Position in the mix (0-based): the same seed always gives the same Job at the same place. */
  position: number;
  family: string;
  /** A DNS label, unique within the mix. */
  name: string;
  spec: Partial<V1JobSpec>;
  pod: MixedPod;
  /** What the differential does once every run has its first pods ready. */
  step?: MidRunStep;
  /** One line: the spec and pod script, for reports. */
  summary: string;
}

/** mulberry32: small, fast, and the same numbers for the same seed on every machine. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Dice {
  private readonly random: () => number;
  constructor(random: () => number) {
    this.random = random;
  }
  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }
  chance(probability: number): boolean {
    return this.random() < probability;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }
  /** A non-empty subset of [0, n) of at most `max` elements, ascending. */
  indexes(n: number, max: number): number[] {
    const size = this.int(1, Math.min(max, n));
    const all = Array.from({ length: n }, (_, i) => i);
    for (let i = all.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [all[i], all[j]] = [all[j]!, all[i]!];
    }
    return all.slice(0, size).sort((a, b) => a - b);
  }
  shuffle<T>(items: readonly T[]): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    return copy;
  }
}

const onExitCodes = (
  action: V1PodFailurePolicyRule['action'],
  operator: 'In' | 'NotIn',
  values: number[],
): V1PodFailurePolicyRule => ({ action, onExitCodes: { containerName: 'main', operator, values } });
/** A rule on the condition KWOK adds to every pod it kills (see stages.yaml, pod-killed). */
const onDisruption = (action: V1PodFailurePolicyRule['action']): V1PodFailurePolicyRule => ({
  action,
  onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }],
});
/** A rule no pod of the Job matches (its pods never exit 99), to vary rule positions. */
const unmatched = (d: Dice): V1PodFailurePolicyRule =>
  onExitCodes(d.pick(['FailJob', 'Ignore', 'Count'] as const), 'In', [99]);

type Shape = { spec: Partial<V1JobSpec>; pod: MixedPod; step?: MidRunStep };
type Family = (d: Dice) => Shape;

/** Extra settings that never decide anything for a Job that ends within seconds. */
function harmless(d: Dice, spec: Partial<V1JobSpec>): Partial<V1JobSpec> {
  return {
    ...spec,
    ...(d.chance(0.2) ? { activeDeadlineSeconds: 300 } : {}),
  };
}

const families: Record<string, Family> = {
  // No pod fails: the controller creates pods until `completions` succeeded and never more.
  // Work queue (completions unset): every pod is created in the Job's first sync, long before
  // the first one ends (1 s), and each of them runs to success: succeeded = parallelism.
  'nonindexed-success': (d) => {
    const parallelism = d.int(1, 4);
    const completions = d.chance(0.3) ? undefined : d.int(1, 5);
    return {
      spec: harmless(d, {
        parallelism,
        ...(completions === undefined ? {} : { completions }),
        ...(d.chance(0.3) ? { backoffLimit: d.int(0, 6) } : {}),
        ...(d.chance(0.2) ? { podFailurePolicy: { rules: [unmatched(d)] } } : {}),
      }),
      pod: { runSeconds: d.pick([1, 1, 2]) },
    };
  },
  // Every pod fails. A wave of min(parallelism, completions) pods starts together and fails
  // together; the next wave only comes after the back-off (10 s or more), once the whole wave
  // failed. When the limit is passed mid-wave, the rest of the wave is deleted, and a deleted
  // pod counts as failed just like one that failed: failed = waves x wave size, whatever the
  // order. (A Count rule on the exit code changes nothing but the pod replacement policy.)
  'nonindexed-backoff': (d) => {
    const parallelism = d.int(1, 3);
    const completions = d.chance(0.3) ? undefined : d.int(1, 4);
    const wave = Math.min(parallelism, completions ?? parallelism);
    // Back-off doubles per failure: at most 3 waves of one pod or 2 of more (<= 40 s waiting).
    const waves = d.int(1, wave === 1 ? 3 : 2);
    const backoffLimit = d.int((waves - 1) * wave, waves * wave - 1);
    const exitCode = d.pick([1, 2, 7]);
    const rules = d.chance(0.5)
      ? [...(d.chance(0.5) ? [unmatched(d)] : []), onExitCodes('Count', 'In', [exitCode])]
      : undefined;
    return {
      spec: harmless(d, {
        parallelism,
        ...(completions === undefined ? {} : { completions }),
        backoffLimit,
        ...(rules ? { podFailurePolicy: { rules } } : {}),
      }),
      pod: { exitCode },
    };
  },
  // FailJob on the exit code every pod exits with: the first failure decides; the other pods of
  // the only wave fail or are deleted, counted failed either way. The message names the pod
  // that failed first; the differential normalises only its generated suffix.
  'nonindexed-failjob': (d) => {
    const parallelism = d.int(1, 3);
    const completions = d.chance(0.3) ? undefined : d.int(1, 4);
    const exitCode = d.pick([3, 42]);
    const failJob = d.chance(0.5)
      ? onExitCodes('FailJob', 'In', [exitCode])
      : onExitCodes('FailJob', 'NotIn', [0, 99]);
    return {
      spec: harmless(d, {
        parallelism,
        ...(completions === undefined ? {} : { completions }),
        backoffLimit: d.int(0, 6),
        podFailurePolicy: { rules: [...(d.chance(0.5) ? [unmatched(d)] : []), failJob] },
      }),
      pod: { exitCode },
    };
  },
  // Lower parallelism while the first pods run (8 s): the controller deletes the extra pods and
  // runs the rest to the end; it does not count the pods it deleted itself (measured: failed
  // stays 0, with or without a rule on them). Tests that the change reaches the mirror in time.
  'scale-down': (d) => {
    const parallelism = d.int(2, 4);
    const indexed = d.chance(0.4);
    const completions = indexed
      ? d.int(parallelism, parallelism + 2)
      : d.pick([undefined, parallelism + d.int(0, 2)]);
    return {
      spec: {
        parallelism,
        ...(completions === undefined ? {} : { completions }),
        ...(indexed ? { completionMode: 'Indexed' } : {}),
      },
      pod: { runSeconds: 8 },
      step: { kind: 'scale-down', parallelism: d.int(1, parallelism - 1) },
    };
  },
  // One running pod deleted from outside (as an eviction would), the one of the lowest index,
  // while the Job is far from finished (pods run 8 s): with a podFailurePolicy the controller
  // judges the pod only once KWOK has ended it (exit code 137 with DisruptionTarget, written
  // together), so every rule meets the same pod: Ignore leaves it out and replaces it, Count
  // counts it, FailIndex fails its index, FailJob fails the Job (the other pods of the wave are
  // then deleted and counted failed, before or after they end); without a policy it counts
  // failed. This is where Ignore is tested: on pods that fail by themselves it would retry them
  // until a deadline, and whether the pod in flight at that instant has its exit code yet
  // (ignored) or not (counted failed) is timing. The same race rules out Ignore, FailIndex and
  // DisruptionTarget rules for pods killed by a deadline (measured: seeds 1 and 20261130).
  'pod-deleted': (d) => {
    const parallelism = d.int(1, 3);
    const indexed = d.chance(0.5);
    const action = d.pick(
      indexed
        ? (['Ignore', 'Count', 'FailJob', 'FailIndex', 'none'] as const)
        : (['Ignore', 'Count', 'FailJob', 'none'] as const),
    );
    const rules: V1PodFailurePolicyRule[] | undefined =
      action === 'none'
        ? undefined
        : [d.chance(0.5) ? onExitCodes(action, 'In', [137]) : onDisruption(action)];
    return {
      spec: {
        parallelism,
        completions: d.int(parallelism, parallelism + 1),
        ...(indexed ? { completionMode: 'Indexed' } : {}),
        ...(action === 'FailIndex' || (indexed && d.chance(0.3))
          ? { backoffLimitPerIndex: d.int(0, 1) }
          : {}),
        ...(rules
          ? { podFailurePolicy: { rules } }
          : { podReplacementPolicy: d.pick(['TerminatingOrFailed', 'Failed'] as const) }),
      },
      pod: { runSeconds: 8 },
      step: { kind: 'delete-pod' },
    };
  },
  // Suspended while the first pods run (8 s), resumed once every run shows Suspended=True with
  // no pod left: suspending deletes the running pods, which the controller does not count, and
  // the resumed Job starts over from the indexes or counts it had.
  'suspend-running': (d) => {
    const parallelism = d.int(1, 3);
    const indexed = d.chance(0.5);
    return {
      spec: {
        parallelism,
        completions: d.int(parallelism, parallelism + 1),
        ...(indexed ? { completionMode: 'Indexed' } : {}),
        ...(indexed && d.chance(0.3) ? { backoffLimitPerIndex: 1 } : {}),
      },
      pod: { runSeconds: 8 },
      step: { kind: 'suspend-resume' },
    };
  },
  // Count or FailJob on the pods the deadline kills (exit code 137): the deadline passes while
  // every pod of the first wave runs (pods run 60 s, deadline 3-5 s) and the Job is already on
  // its DeadlineExceeded path; whether a rule meets a pod before or after KWOK ended it, the pod
  // counts failed and the Job's path stays.
  'pfp-deadline-kills': (d) => {
    const parallelism = d.int(1, 3);
    const indexed = d.chance(0.5);
    return {
      spec: {
        parallelism,
        completions: d.int(parallelism, parallelism + 1),
        ...(indexed ? { completionMode: 'Indexed' } : {}),
        activeDeadlineSeconds: d.int(3, 5),
        podFailurePolicy: { rules: [onExitCodes(d.pick(['Count', 'FailJob'] as const), 'In', [137])] },
      },
      pod: { runSeconds: 60 },
    };
  },
  // completions 0: done before any pod, in the Job controller's first sync.
  'zero-completions': (d) => ({
    spec: {
      completions: 0,
      parallelism: d.int(0, 2),
      ...(d.chance(0.5) ? { completionMode: 'Indexed' } : {}),
    },
    pod: {},
  }),
  // The deadline passes while the first wave runs (pods run 60 s, the deadline is 3-5 s): every
  // pod of the wave is created in the Job's first sync and still running, so all of them are
  // deleted and counted failed, and none succeeded.
  deadline: (d) => {
    const parallelism = d.int(1, 3);
    const indexed = d.chance(0.5);
    const completions = indexed ? d.int(parallelism, parallelism + 2) : d.pick([undefined, parallelism + 1]);
    return {
      spec: {
        parallelism,
        ...(completions === undefined ? {} : { completions }),
        ...(indexed ? { completionMode: 'Indexed' } : {}),
        ...(indexed && d.chance(0.4) ? { backoffLimitPerIndex: d.int(0, 1) } : {}),
        activeDeadlineSeconds: d.int(3, 5),
      },
      pod: { runSeconds: 60 },
    };
  },
  // No pod fails: every index succeeds once; with backoffLimitPerIndex, failedIndexes is empty.
  'indexed-success': (d) => {
    const completions = d.int(1, 6);
    return {
      spec: harmless(d, {
        completionMode: 'Indexed',
        completions,
        parallelism: d.int(1, completions + 1),
        ...(d.chance(0.3) ? { backoffLimitPerIndex: d.int(0, 1) } : {}),
      }),
      pod: { runSeconds: d.pick([1, 1, 2]) },
    };
  },
  // backoffLimitPerIndex without an early end (maxFailedIndexes unset or not reached): each index
  // runs to its own end, a failing one (fail-indexes) failing on every retry, so the final sets
  // and counts do not depend on how retries interleave. FailIndex skips the retries.
  'indexed-per-index': (d) => {
    const completions = d.int(2, 6);
    const failing = d.indexes(completions, 3);
    const backoffLimitPerIndex = d.int(0, 1);
    const rule = d.pick(['none', 'none', 'FailIndex', 'Count', 'Ignore-unmatched'] as const);
    const rules =
      rule === 'none'
        ? undefined
        : rule === 'Ignore-unmatched'
          ? [onExitCodes('Ignore', 'In', [99])]
          : [onExitCodes(rule, 'In', [1])];
    return {
      spec: harmless(d, {
        completionMode: 'Indexed',
        completions,
        parallelism: d.int(1, completions),
        backoffLimitPerIndex,
        ...(d.chance(0.5) ? { maxFailedIndexes: d.int(failing.length, completions) } : {}),
        ...(rules ? { podFailurePolicy: { rules } } : {}),
      }),
      pod: { failIndexes: failing.join(',') },
    };
  },
  // maxFailedIndexes exceeded: parallelism 1 and no retry of a failed index (per-index limit 0,
  // or a FailIndex rule), so indexes run one at a time in ascending order and the Job fails at
  // the (maxFailedIndexes+1)-th failing index with nothing else running.
  'indexed-max-failed': (d) => {
    const completions = d.int(2, 6);
    const failing = d.indexes(completions, 3);
    const failIndexRule = d.chance(0.5);
    return {
      spec: {
        completionMode: 'Indexed',
        completions,
        parallelism: 1,
        backoffLimitPerIndex: failIndexRule ? d.int(1, 2) : 0,
        maxFailedIndexes: d.int(0, failing.length - 1),
        ...(failIndexRule ? { podFailurePolicy: { rules: [onExitCodes('FailIndex', 'In', [1])] } } : {}),
      },
      pod: { failIndexes: failing.join(',') },
    };
  },
  // A global backoffLimit (or FailJob) with failing indexes, parallelism 1: the Job's back-off
  // holds every new pod, and the lowest pending index (the failing one) is retried first, so the
  // indexes run in order until the limit; nothing else runs when the Job fails.
  'indexed-backoff-sequential': (d) => {
    const completions = d.int(2, 5);
    const failJob = d.chance(0.3);
    return {
      spec: {
        completionMode: 'Indexed',
        completions,
        parallelism: 1,
        backoffLimit: d.int(0, 2),
        ...(failJob ? { podFailurePolicy: { rules: [onExitCodes('FailJob', 'In', [1])] } } : {}),
      },
      pod: { failIndexes: d.indexes(completions, 2).join(',') },
    };
  },
  // A global backoffLimit, one failing index, every index in the first wave: the first failure
  // does not reach the limit (backoffLimit >= 1), every other index succeeds in that wave
  // (~1 s), and later failures are retries of that one index alone, so the limit is reached
  // with nothing else running. (Two failing indexes would drift apart: a success resets the
  // back-off of one retry and not of the other.)
  'indexed-backoff-wide': (d) => {
    const completions = d.int(2, 5);
    return {
      spec: {
        completionMode: 'Indexed',
        completions,
        parallelism: d.int(completions, completions + 1),
        backoffLimit: d.int(1, 2),
      },
      pod: { failIndexes: String(d.int(0, completions - 1)) },
    };
  },
  // successPolicy with parallelism 1 and no retries (failing indexes, if any, have a per-index
  // limit of 0): indexes run one at a time in ascending order, so where the policy is met, or
  // that it never is, does not depend on timing.
  'success-policy': (d) => {
    const completions = d.int(2, 6);
    const chosen = d.indexes(completions, 3);
    const rule = d.pick(['indexes', 'count', 'both'] as const);
    const succeededIndexes = chosen.join(',');
    const failing = d.chance(0.4) ? d.indexes(completions, 2) : [];
    return {
      spec: {
        completionMode: 'Indexed',
        completions,
        parallelism: 1,
        successPolicy: {
          rules: [
            rule === 'count'
              ? { succeededCount: d.int(1, completions) }
              : rule === 'indexes'
                ? { succeededIndexes }
                : { succeededIndexes, succeededCount: d.int(1, chosen.length) },
          ],
        },
        ...(failing.length > 0 ? { backoffLimitPerIndex: 0 } : {}),
      },
      pod: failing.length > 0 ? { failIndexes: failing.join(',') } : {},
    };
  },
  // Created suspended, resumed once suspended everywhere (the differential resumes the origin
  // and both direct runs when each shows Suspended=True): nothing runs before, so it ends as the
  // same Job created running, with Suspended=False/JobResumed first among its conditions.
  'created-suspended': (d) => {
    const base = d.pick(['nonindexed-success', 'indexed-success', 'indexed-per-index'] as const);
    const { spec, pod } = families[base]!(d);
    return { spec: { ...spec, suspend: true }, pod };
  },
};

export const familyNames = Object.keys(families);

function describe(spec: Partial<V1JobSpec>, pod: MixedPod): string {
  const parts: string[] = [spec.completionMode === 'Indexed' ? 'Indexed' : 'NonIndexed'];
  parts.push(`completions=${spec.completions ?? 'unset'}`, `parallelism=${spec.parallelism ?? 1}`);
  for (const key of [
    'backoffLimit',
    'backoffLimitPerIndex',
    'maxFailedIndexes',
    'activeDeadlineSeconds',
    'suspend',
    'podReplacementPolicy',
  ] as const) {
    if (spec[key] !== undefined) parts.push(`${key}=${spec[key]}`);
  }
  if (spec.podFailurePolicy) {
    const rules = spec.podFailurePolicy.rules.map((r) =>
      r.onExitCodes
        ? `${r.action} exit ${r.onExitCodes.operator} ${r.onExitCodes.values.join('|')}`
        : `${r.action} ${r.onPodConditions?.map((c) => c.type).join('|')}`,
    );
    parts.push(`podFailurePolicy=[${rules.join('; ')}]`);
  }
  if (spec.successPolicy) {
    const rules = spec.successPolicy.rules.map((r) =>
      [
        r.succeededIndexes === undefined ? '' : `indexes ${r.succeededIndexes}`,
        r.succeededCount === undefined ? '' : `count ${r.succeededCount}`,
      ]
        .filter(Boolean)
        .join(' '),
    );
    parts.push(`successPolicy=[${rules.join('; ')}]`);
  }
  parts.push(
    `pods: run ${pod.runSeconds ?? 1}s` +
      (pod.exitCode !== undefined ? `, exit ${pod.exitCode}` : '') +
      (pod.failIndexes !== undefined ? `, fail-indexes ${pod.failIndexes}` : ''),
  );
  return parts.join(' ');
}

/**
 * `count` Jobs from `seed`. Families are dealt in a shuffled round-robin, so a mix of 30 holds
 * every family at least twice; within a family, the parameters are random.
 */
export function generateJobMix(seed: number, count: number): MixedJob[] {
  const d = new Dice(seededRandom(seed));
  const jobs: MixedJob[] = [];
  let deck: string[] = [];
  for (let position = 0; position < count; position++) {
    if (deck.length === 0) deck = d.shuffle(familyNames);
    const family = deck.pop()!;
    const { spec, pod, step } = families[family]!(d);
    jobs.push({
      position,
      family,
      name: `j${String(position).padStart(3, '0')}-${family}`,
      spec,
      pod,
      ...(step ? { step } : {}),
      summary:
        describe(spec, pod) +
        (step?.kind === 'scale-down'
          ? `, then parallelism=${step.parallelism}`
          : step
            ? `, then ${step.kind === 'delete-pod' ? 'one pod deleted' : 'suspended and resumed'}`
            : ''),
    });
  }
  return jobs;
}
