// The status-rule validator (@jobrelay/status) against its oracle, a real kube-apiserver: a
// reproducible sample of generated /status transitions, legal controller moves and single illegal
// edits, is sent to real Jobs, and the validator must accept exactly the ones the apiserver
// accepts. The Jobs carry a managedBy value nobody serves, so neither the built-in Job controller
// nor jobrelay writes their status in between.
import { type StatusRuleViolation, validateJobStatusTransition } from '@jobrelay/status';
import type { V1Job, V1JobCondition, V1JobSpec, V1JobStatus } from '@kubernetes/client-node';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyControllerMove,
  type ControllerModelOptions,
  type ControllerMove,
  controllerJobStatus,
  ENDING_MOVES,
  hasTrueCondition,
  indexMoveArbitrary,
  initialControllerState,
  isFinished,
  journeyEndingArbitrary,
  outcomeMoveArbitrary,
  previouslySuspendedState,
  progressMoveArbitrary,
  secondsAfterEpoch,
  shiftedBy,
  withoutCondition,
  withTrueConditions,
} from '../../packages/status/test-support/job-status-generators.ts';
import {
  type ClusterClients,
  clientsFor,
  createTestNamespace,
  sandboxJob,
  testSandbox,
} from '../src/kube-test-helpers.ts';

// Fixed so that a failure names a sample anyone can replay; JOBRELAY_AGREEMENT_SEED explores others.
const SEED = Number(process.env.JOBRELAY_AGREEMENT_SEED ?? 20250301);
const GENERATED_SAMPLES = 500;
// Modest: the fleet shares a 2-core machine with the other e2e files' clusters.
const CONCURRENCY = 8;
const agreementManagedBy = 'example.com/agreement-test';

// --- Generated transitions: a model of the built-in Job controller, plus one illegal edit ---

// The controller model of test-support/job-status-generators.ts, its conditions with messages as a
// real controller writes them.
const modelOptions: ControllerModelOptions = { conditionMessages: true };

interface SpecChoice {
  indexed: boolean;
  completions: number | undefined;
  parallelism: number;
  successPolicy: boolean;
  backoffLimitPerIndex: boolean;
  suspend: boolean;
}

function jobSpecOf(choice: SpecChoice): Partial<V1JobSpec> {
  return {
    completionMode: choice.indexed ? 'Indexed' : 'NonIndexed',
    completions: choice.completions,
    parallelism: choice.parallelism,
    suspend: choice.suspend,
    ...(choice.backoffLimitPerIndex ? { backoffLimitPerIndex: 1 } : {}),
    ...(choice.successPolicy ? { successPolicy: { rules: [{ succeededIndexes: '0' }] } } : {}),
  };
}

const rarely = fc.nat(3).map((n) => n === 0);

const specArbitrary: fc.Arbitrary<SpecChoice> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      indexed: fc.constant(false),
      // undefined: a work queue (parallelism only), where no index rule applies.
      completions: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined, freq: 4 }),
      parallelism: fc.integer({ min: 1, max: 4 }),
      successPolicy: fc.constant(false),
      backoffLimitPerIndex: fc.constant(false),
      suspend: rarely,
    }),
  },
  {
    weight: 5,
    arbitrary: fc
      .record({
        indexed: fc.constant(true),
        completions: fc.integer({ min: 1, max: 5 }),
        parallelism: fc.integer({ min: 1, max: 4 }),
        // completions == parallelism: the one case where succeeded may decrease.
        elastic: fc.boolean(),
        successPolicy: fc.boolean(),
        backoffLimitPerIndex: fc.boolean(),
        suspend: rarely,
      })
      .map(({ elastic, ...choice }) => (elastic ? { ...choice, parallelism: choice.completions } : choice)),
  },
  {
    // Suspended with zero completions may finish without a startTime (k8s #132144).
    weight: 1,
    arbitrary: fc.record({
      indexed: fc.constant(false),
      completions: fc.constant(0),
      parallelism: fc.integer({ min: 1, max: 2 }),
      successPolicy: fc.constant(false),
      backoffLimitPerIndex: fc.constant(false),
      suspend: rarely,
    }),
  },
);

const moveArbitrary: fc.Arbitrary<ControllerMove> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'start' as const }) },
  { weight: 1, arbitrary: fc.constantFrom({ kind: 'suspend' as const }, { kind: 'resume' as const }) },
  { weight: 6, arbitrary: progressMoveArbitrary(4) },
  { weight: 4, arbitrary: indexMoveArbitrary },
  { weight: 2, arbitrary: outcomeMoveArbitrary },
);

// --- One illegal edit of a legal new status (an edit returns undefined where it does not apply) ---

interface EditInput {
  spec: SpecChoice;
  oldStatus: V1JobStatus;
  newStatus: V1JobStatus;
  amount: number;
}

const withTrue = (status: V1JobStatus, ...types: string[]): V1JobCondition[] =>
  withTrueConditions(status, types, 'Edited');

/** The pods-gone part of finishing, so that an edit adding a terminal condition breaks one rule only. */
const podsGone = {
  active: 0,
  ready: 0,
  terminating: 0,
  uncountedTerminatedPods: { succeeded: [], failed: [] },
};

const BAD_INDEX_LISTS = ['2,1', '1-1', '3-2', 'x', '0,,1', '-1', '1-2-3', '0 '];

const illegalEdits: Record<string, (input: EditInput) => V1JobStatus | undefined> = {
  'decrease failed': ({ oldStatus, newStatus }) =>
    (oldStatus.failed ?? 0) > 0 ? { ...newStatus, failed: (oldStatus.failed ?? 0) - 1 } : undefined,
  'decrease succeeded': ({ oldStatus, newStatus }) =>
    (oldStatus.succeeded ?? 0) > 0 ? { ...newStatus, succeeded: (oldStatus.succeeded ?? 0) - 1 } : undefined,
  'remove completionTime': ({ newStatus }) =>
    newStatus.completionTime ? { ...newStatus, completionTime: undefined } : undefined,
  'change completionTime': ({ oldStatus, newStatus, amount }) =>
    oldStatus.completionTime
      ? { ...newStatus, completionTime: shiftedBy(oldStatus.completionTime, amount % 2 ? amount : -amount) }
      : undefined,
  'completionTime without Complete': ({ newStatus, amount }) =>
    hasTrueCondition(newStatus.conditions, 'Complete')
      ? undefined
      : { ...newStatus, completionTime: shiftedBy(newStatus.startTime, amount) },
  'completionTime before startTime': ({ newStatus, amount }) =>
    newStatus.startTime && !isFinished(newStatus.conditions)
      ? {
          ...newStatus,
          ...podsGone,
          conditions: withTrue(newStatus, 'SuccessCriteriaMet', 'Complete'),
          completionTime: shiftedBy(newStatus.startTime, -amount),
        }
      : undefined,
  'change startTime': ({ oldStatus, newStatus, amount }) =>
    oldStatus.startTime
      ? { ...newStatus, startTime: shiftedBy(oldStatus.startTime, amount % 2 ? amount : -amount) }
      : undefined,
  'remove startTime': ({ oldStatus, newStatus }) =>
    oldStatus.startTime ? { ...newStatus, startTime: undefined } : undefined,
  'Failed without FailureTarget': ({ newStatus }) =>
    hasTrueCondition(newStatus.conditions, 'FailureTarget') || isFinished(newStatus.conditions)
      ? undefined
      : { ...newStatus, ...podsGone, conditions: withTrue(newStatus, 'Failed') },
  'Complete without SuccessCriteriaMet': ({ newStatus }) =>
    hasTrueCondition(newStatus.conditions, 'SuccessCriteriaMet') || isFinished(newStatus.conditions)
      ? undefined
      : {
          ...newStatus,
          ...podsGone,
          conditions: withTrue(newStatus, 'Complete'),
          completionTime: newStatus.startTime ?? secondsAfterEpoch(0),
        },
  'Complete and Failed': ({ newStatus }) =>
    hasTrueCondition(newStatus.conditions, 'Failed')
      ? { ...newStatus, conditions: withTrue(newStatus, 'Complete'), completionTime: newStatus.startTime }
      : hasTrueCondition(newStatus.conditions, 'Complete')
        ? { ...newStatus, conditions: withTrue(newStatus, 'FailureTarget', 'Failed') }
        : undefined,
  'SuccessCriteriaMet with FailureTarget': ({ newStatus }) =>
    hasTrueCondition(newStatus.conditions, 'SuccessCriteriaMet')
      ? { ...newStatus, conditions: withTrue(newStatus, 'FailureTarget') }
      : hasTrueCondition(newStatus.conditions, 'FailureTarget')
        ? { ...newStatus, conditions: withTrue(newStatus, 'SuccessCriteriaMet') }
        : undefined,
  'ready above active': ({ newStatus, amount }) => ({
    ...newStatus,
    ready: (newStatus.active ?? 0) + 1 + (amount % 3),
  }),
  'finished with active pods': ({ newStatus, amount }) =>
    isFinished(newStatus.conditions) ? { ...newStatus, active: 1 + (amount % 3), ready: 0 } : undefined,
  'finished with terminating pods': ({ newStatus, amount }) =>
    isFinished(newStatus.conditions) ? { ...newStatus, terminating: 1 + (amount % 3) } : undefined,
  'finished with uncounted pods': ({ newStatus }) =>
    isFinished(newStatus.conditions)
      ? { ...newStatus, uncountedTerminatedPods: { succeeded: ['pod-late'], failed: [] } }
      : undefined,
  'finished without startTime': ({ newStatus }) =>
    isFinished(newStatus.conditions)
      ? { ...newStatus, startTime: undefined }
      : {
          ...newStatus,
          ...podsGone,
          startTime: undefined,
          conditions: withTrue(newStatus, 'FailureTarget', 'Failed'),
        },
  'negative counter': ({ newStatus, amount }) => {
    const counter =
      (['active', 'succeeded', 'failed', 'ready', 'terminating'] as const)[amount % 5] ?? 'failed';
    return { ...newStatus, [counter]: -1 };
  },
  'bad uncounted pod UIDs': ({ newStatus, amount }) => ({
    ...newStatus,
    uncountedTerminatedPods:
      amount % 2 ? { succeeded: ['pod-twice'], failed: ['pod-twice'] } : { succeeded: [''], failed: [] },
  }),
  'drop a terminal condition': ({ oldStatus, newStatus, amount }) => {
    const type = ['Complete', 'Failed', 'FailureTarget'].find((t) =>
      hasTrueCondition(oldStatus.conditions, t),
    );
    if (!type) return undefined;
    const conditions =
      amount % 2
        ? withoutCondition(newStatus, type)
        : (newStatus.conditions ?? []).map((c) =>
            c.type === type ? { ...c, status: amount % 4 ? 'False' : 'Unknown' } : c,
          );
    return { ...newStatus, conditions };
  },
  'drop SuccessCriteriaMet': ({ oldStatus, newStatus }) =>
    hasTrueCondition(oldStatus.conditions, 'SuccessCriteriaMet')
      ? { ...newStatus, conditions: withoutCondition(newStatus, 'SuccessCriteriaMet') }
      : undefined,
  'bad completedIndexes': ({ spec, newStatus, amount }) =>
    spec.indexed
      ? {
          ...newStatus,
          completedIndexes:
            amount % 3 === 0
              ? `${(spec.completions ?? 0) + (amount % 2)}`
              : BAD_INDEX_LISTS[amount % BAD_INDEX_LISTS.length],
        }
      : { ...newStatus, completedIndexes: '0' },
  'bad failedIndexes': ({ spec, newStatus, amount }) =>
    spec.backoffLimitPerIndex
      ? {
          ...newStatus,
          failedIndexes:
            amount % 3 === 0
              ? `${(spec.completions ?? 0) + (amount % 2)}`
              : BAD_INDEX_LISTS[amount % BAD_INDEX_LISTS.length],
        }
      : { ...newStatus, failedIndexes: amount % 2 ? '' : '0' },
  'completed and failed index overlap': ({ spec, newStatus }) => {
    if (!spec.backoffLimitPerIndex) return undefined;
    const completed = newStatus.completedIndexes || '0';
    const first = completed.split(/[,-]/)[0] ?? '0';
    return { ...newStatus, completedIndexes: completed, failedIndexes: first };
  },
};

const illegalEditNames = Object.keys(illegalEdits);

interface Transition {
  /** How the sample was made, for the report: 'legal' or the illegal edit's name, or a fixed example. */
  label: string;
  spec: Partial<V1JobSpec>;
  oldStatus: V1JobStatus;
  newStatus: V1JobStatus;
  /** Only for the fixed examples: the verdict the apiserver is known to give. */
  expected?: 'accepted' | 'rejected';
}

const transitionArbitrary: fc.Arbitrary<Transition> = fc
  .record({
    spec: specArbitrary,
    // Suspended earlier (maybe after starting); spec.suspend says whether the user has resumed it since.
    initiallySuspended: rarely,
    startedBeforeSuspension: fc.boolean(),
    moves: fc.array(fc.tuple(moveArbitrary, fc.nat(60)), { maxLength: 16, size: 'medium' }),
    ending: journeyEndingArbitrary,
    // Counted back from the end of the journey, mostly near it, where the terminal states are.
    oldFromEnd: fc.oneof(fc.nat(3), fc.nat(16)),
    step: fc.integer({ min: 1, max: 3 }),
    illegal: fc.boolean(),
    editNumber: fc.nat(1000),
    amount: fc.integer({ min: 1, max: 600 }),
  })
  .map(
    ({
      spec,
      initiallySuspended,
      startedBeforeSuspension,
      moves,
      ending,
      oldFromEnd,
      step,
      illegal,
      ...edit
    }) => {
      const modelledSpec = jobSpecOf(spec);
      let state = initiallySuspended
        ? previouslySuspendedState(startedBeforeSuspension, modelOptions)
        : initialControllerState;
      const journey = [state];
      const timedEnding = ENDING_MOVES[ending].map((move): [ControllerMove, number] => [move, 5]);
      // Most Jobs start at once; the rest of the journey is where the rules bite.
      const opening: [ControllerMove, number] = [{ kind: 'start' }, 0];
      for (const [move, elapsed] of [opening, ...moves, ...timedEnding]) {
        state = applyControllerMove(
          { ...state, clock: state.clock + elapsed },
          move,
          modelledSpec,
          modelOptions,
        );
        journey.push(state);
      }
      const oldIndex = Math.max(0, journey.length - 1 - oldFromEnd);
      const oldState = journey[oldIndex] ?? initialControllerState;
      const newState = journey[Math.min(oldIndex + step, journey.length - 1)] ?? oldState;
      const oldStatus = controllerJobStatus(oldState, modelledSpec);
      const legalNew = controllerJobStatus(newState, modelledSpec);
      if (illegal) {
        // One of the edits that apply here, each as likely as the others.
        const applicable = illegalEditNames.flatMap((name) => {
          const newStatus = illegalEdits[name]?.({
            spec,
            oldStatus,
            newStatus: legalNew,
            amount: edit.amount,
          });
          return newStatus ? [{ name, newStatus }] : [];
        });
        const chosen = applicable[edit.editNumber % applicable.length];
        if (chosen)
          return { label: chosen.name, spec: jobSpecOf(spec), oldStatus, newStatus: chosen.newStatus };
      }
      return { label: 'legal', spec: jobSpecOf(spec), oldStatus, newStatus: legalNew };
    },
  );

// --- Fixed examples: subtleties the validator's author pinned down against v1.35.4 ---

const T0 = secondsAfterEpoch(0);
const T1 = secondsAfterEpoch(120);
const fixedExamples: Transition[] = [
  {
    label: '(a) resume: Suspended True -> False with a new startTime',
    expected: 'accepted',
    spec: { completions: 1, parallelism: 1, suspend: false },
    oldStatus: {
      startTime: T0,
      conditions: [{ type: 'Suspended', status: 'True', reason: 'JobSuspended', lastTransitionTime: T0 }],
    },
    newStatus: {
      startTime: T1,
      conditions: [{ type: 'Suspended', status: 'False', reason: 'JobResumed', lastTransitionTime: T1 }],
    },
  },
  {
    label: '(b) new startTime with the Suspended condition removed is no resume',
    expected: 'rejected',
    spec: { completions: 1, parallelism: 1, suspend: false },
    oldStatus: {
      startTime: T0,
      conditions: [{ type: 'Suspended', status: 'True', reason: 'JobSuspended', lastTransitionTime: T0 }],
    },
    newStatus: { startTime: T1, conditions: [] },
  },
  {
    label: '(c) FailureTarget and Failed added in one update',
    expected: 'accepted',
    spec: { completions: 1, parallelism: 1 },
    oldStatus: { startTime: T0, active: 1, ready: 1 },
    newStatus: {
      startTime: T0,
      active: 0,
      ready: 0,
      failed: 1,
      conditions: [
        { type: 'FailureTarget', status: 'True', reason: 'BackoffLimitExceeded', lastTransitionTime: T1 },
        { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', lastTransitionTime: T1 },
      ],
    },
  },
  {
    label: '(d) SuccessCriteriaMet, Complete and completionTime added in one update',
    expected: 'accepted',
    spec: { completions: 1, parallelism: 1 },
    oldStatus: { startTime: T0, active: 1, ready: 1 },
    newStatus: {
      startTime: T0,
      completionTime: T1,
      active: 0,
      ready: 0,
      succeeded: 1,
      conditions: [
        { type: 'SuccessCriteriaMet', status: 'True', reason: 'CompletionsReached', lastTransitionTime: T1 },
        { type: 'Complete', status: 'True', reason: 'CompletionsReached', lastTransitionTime: T1 },
      ],
    },
  },
  {
    label: '(e) failedIndexes "" on an Indexed Job without backoffLimitPerIndex',
    expected: 'rejected',
    spec: { completionMode: 'Indexed', completions: 3, parallelism: 3 },
    oldStatus: { startTime: T0, active: 3, ready: 3 },
    newStatus: { startTime: T0, active: 3, ready: 3, failedIndexes: '' },
  },
  {
    // Why the generated times are whole seconds: the stored time lost its milliseconds, and the
    // new one is compared as sent, so re-sending a Date that still has them changes startTime.
    label: '(f) startTime re-sent with milliseconds the stored one lost',
    expected: 'rejected',
    spec: { completions: 1, parallelism: 1 },
    oldStatus: { startTime: new Date(T0.getTime() + 500), active: 1 },
    newStatus: { startTime: new Date(T0.getTime() + 500), active: 1 },
  },
];

// --- Sending them to the apiserver ---

type Outcome =
  /** The apiserver refused the old status itself; the sample cannot be tried. */
  | { kind: 'skipped'; transition: Transition; setup: Verdict }
  | { kind: 'tried'; transition: Transition; setup: Verdict; update: Verdict };

interface Verdict {
  spec: V1JobSpec;
  oldStatus: V1JobStatus;
  newStatus: V1JobStatus;
  violations: StatusRuleViolation[];
  httpStatus: number;
  apiserverMessage?: string;
  stored?: V1Job;
}

const agree = (verdict: Verdict): boolean =>
  (verdict.violations.length === 0) === (verdict.httpStatus === 200);

function apiserverMessageOf(body: unknown): string {
  if (typeof body === 'string') {
    try {
      return (JSON.parse(body) as { message?: string }).message ?? body;
    } catch {
      return body;
    }
  }
  return (body as { message?: string } | undefined)?.message ?? JSON.stringify(body);
}

/** One /status write, judged first by the validator (against the stored job) and then by the apiserver. */
async function judge(clients: ClusterClients, stored: V1Job, newStatus: V1JobStatus): Promise<Verdict> {
  const spec = stored.spec!;
  const oldStatus = stored.status ?? {};
  const violations = validateJobStatusTransition({ spec, oldStatus, newStatus });
  try {
    const written = await clients.batch.replaceNamespacedJobStatus({
      name: stored.metadata!.name!,
      namespace: stored.metadata!.namespace!,
      body: { ...stored, status: newStatus },
    });
    return { spec, oldStatus, newStatus, violations, httpStatus: 200, stored: written };
  } catch (err) {
    const { code, body } = err as { code?: unknown; body?: unknown };
    // 422 is the verdict we test; anything else (400, 409, 5xx) is a broken test, not a disagreement.
    if (code !== 422) throw err;
    return {
      spec,
      oldStatus,
      newStatus,
      violations,
      httpStatus: 422,
      apiserverMessage: apiserverMessageOf(body),
    };
  }
}

async function mapConcurrently<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<R>,
) {
  const results: R[] = new Array(items.length);
  let next = 0;
  const runner = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, runner));
  return results;
}

function describeDisagreement(label: string, verdict: Verdict): string {
  const validatorSays =
    verdict.violations.length === 0
      ? 'validator: accept'
      : `validator: reject\n    ${verdict.violations.map((v) => `${v.rule} (${v.field}): ${v.message}`).join('\n    ')}`;
  return [
    `- ${label}`,
    // The template and selector are the apiserver's defaults and say nothing about status rules.
    `  spec: ${JSON.stringify({ ...verdict.spec, template: undefined, selector: undefined })}`,
    `  old:  ${JSON.stringify(verdict.oldStatus)}`,
    `  new:  ${JSON.stringify(verdict.newStatus)}`,
    `  ${validatorSays}`,
    `  apiserver: ${verdict.httpStatus}${verdict.apiserverMessage ? ` ${verdict.apiserverMessage}` : ''}`,
  ].join('\n');
}

let management: ClusterClients;
let namespace: string;

beforeAll(async () => {
  const sandbox = testSandbox();
  management = clientsFor(sandbox, sandbox.management.name);
  namespace = await createTestNamespace(management, 'agreement');
});

afterAll(async () => {
  // Its Jobs are inert (nobody manages them); the namespace controller removes them.
  if (namespace) await management.core.deleteNamespace({ name: namespace });
});

describe('the status-rule validator and a real kube-apiserver', () => {
  it('agree on every one of a generated sample of /status transitions', { timeout: 180_000 }, async () => {
    console.log(`[agreement] fast-check seed ${SEED} (set JOBRELAY_AGREEMENT_SEED to try another)`);
    const generated = fc.sample(transitionArbitrary, { numRuns: GENERATED_SAMPLES, seed: SEED });
    const transitions = [...fixedExamples, ...generated];
    const began = Date.now();

    const outcomes = await mapConcurrently(
      transitions,
      CONCURRENCY,
      async (transition, index): Promise<Outcome> => {
        // Each sample gets its own Job, so its status history is exactly old -> new.
        const created = await management.batch.createNamespacedJob({
          namespace,
          body: sandboxJob({ name: `agree-${index}`, managedBy: agreementManagedBy, spec: transition.spec }),
        });
        const setup = await judge(management, created, transition.oldStatus);
        if (setup.httpStatus !== 200 || !setup.stored) return { kind: 'skipped', transition, setup };
        // Judged against the status as stored (read back), exactly as the status writer would be.
        const update = await judge(management, setup.stored, transition.newStatus);
        return { kind: 'tried', transition, setup, update };
      },
    );
    const seconds = (Date.now() - began) / 1000;

    const tried = outcomes.filter((o) => o.kind === 'tried');
    const skipped = outcomes.filter((o) => o.kind === 'skipped');
    const accepted = tried.filter((o) => o.update.httpStatus === 200);
    const rejected = tried.filter((o) => o.update.httpStatus === 422);
    const byLabel = new Map<string, { accepted: number; rejected: number }>();
    for (const o of tried) {
      const entry = byLabel.get(o.transition.label) ?? { accepted: 0, rejected: 0 };
      entry[o.update.httpStatus === 200 ? 'accepted' : 'rejected']++;
      byLabel.set(o.transition.label, entry);
    }
    const rulesSeen = new Set(rejected.flatMap((o) => o.update.violations.map((v) => v.rule)));
    console.log(
      `[agreement] ${transitions.length} transitions in ${seconds.toFixed(1)}s: ${accepted.length} accepted, ` +
        `${rejected.length} rejected, ${skipped.length} skipped (old status refused); ` +
        `${rulesSeen.size} distinct rules behind the rejections`,
    );
    for (const [label, counts] of [...byLabel].sort()) {
      console.log(`[agreement]   ${label}: ${counts.accepted} accepted, ${counts.rejected} rejected`);
    }

    // Writing the old status over the empty one is a transition too: the validator must agree there.
    const disagreements = [
      ...outcomes
        .filter((o) => !agree(o.setup))
        .map((o) => describeDisagreement(`${o.transition.label} (writing the old status)`, o.setup)),
      ...tried.filter((o) => !agree(o.update)).map((o) => describeDisagreement(o.transition.label, o.update)),
    ];
    expect(
      disagreements,
      `validator and apiserver disagree (seed ${SEED}):\n${disagreements.join('\n')}`,
    ).toEqual([]);

    // The pinned examples: both must give the known verdict, not merely the same one.
    for (const example of fixedExamples) {
      const outcome = outcomes[fixedExamples.indexOf(example)];
      expect(outcome?.kind, example.label).toBe('tried');
      if (outcome?.kind !== 'tried') continue;
      const verdict = outcome.update.httpStatus === 200 ? 'accepted' : 'rejected';
      expect(verdict, `${example.label}: ${outcome.update.apiserverMessage ?? ''}`).toBe(example.expected);
    }

    // A sample worth its name: large, mixed, and broad.
    expect(
      skipped.length / transitions.length,
      'fraction of samples whose old status was refused',
    ).toBeLessThan(0.05);
    expect(tried.length).toBeGreaterThanOrEqual(150);
    expect(rejected.length / tried.length, 'fraction rejected').toBeGreaterThanOrEqual(0.3);
    expect(accepted.length / tried.length, 'fraction accepted').toBeGreaterThanOrEqual(0.3);
    expect(
      rulesSeen.size,
      `rules behind the rejections: ${[...rulesSeen].join(', ')}`,
    ).toBeGreaterThanOrEqual(15);
  });
});
