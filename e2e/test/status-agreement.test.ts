// The Job status-rule validator (@jobrelay/kinds' batch-job) against its oracle, a real kube-apiserver: a
// reproducible sample of generated /status transitions, legal controller moves and single illegal
// edits, is sent to real Jobs, and the validator must accept exactly the ones the apiserver
// accepts, and where both reject, name the same rules (the apiserver's error causes are mapped
// to our rule ids). Every rule id must be seen rejecting a write at least once; targeted
// examples make sure of it whatever the seed. The Jobs carry a managedBy value nobody serves, so
// neither the built-in Job controller nor jobrelay writes their status in between.
import {
  type Job,
  type JobCondition,
  type JobSpec,
  type JobStatus,
  jobStatusRuleIds,
  type StatusRuleViolation,
  validateJobStatusTransition,
} from '@jobrelay/kinds';
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
} from '@jobrelay/kinds/test-support/batch-job/job-status-generators';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ClusterClients,
  clientsFor,
  createTestNamespace,
  plainJson,
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

function jobSpecOf(choice: SpecChoice): Partial<JobSpec> {
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
  oldStatus: JobStatus;
  newStatus: JobStatus;
  amount: number;
}

const withTrue = (status: JobStatus, ...types: string[]): JobCondition[] =>
  withTrueConditions(status, types, 'Edited');

/** The pods-gone part of finishing, so that an edit adding a terminal condition breaks one rule only. */
const podsGone = {
  active: 0,
  ready: 0,
  terminating: 0,
  uncountedTerminatedPods: { succeeded: [], failed: [] },
};

const BAD_INDEX_LISTS = ['2,1', '1-1', '3-2', 'x', '0,,1', '-1', '1-2-3', '0 '];

const illegalEdits: Record<string, (input: EditInput) => JobStatus | undefined> = {
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
  spec: Partial<JobSpec>;
  oldStatus: JobStatus;
  newStatus: JobStatus;
  /** Only for the fixed examples: the verdict the apiserver is known to give. */
  expected?: 'accepted' | 'rejected';
  /** Only for the rule examples: the rule the apiserver must name when it rejects the update. */
  covers?: JobStatusRuleId;
}

type JobStatusRuleId = (typeof jobStatusRuleIds)[number];

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
    // new one is compared as sent, so re-sending a time that still has them changes startTime.
    label: '(f) startTime re-sent with milliseconds the stored one lost',
    expected: 'rejected',
    spec: { completions: 1, parallelism: 1 },
    oldStatus: { startTime: new Date(Date.parse(T0) + 500).toISOString(), active: 1 },
    newStatus: { startTime: new Date(Date.parse(T0) + 500).toISOString(), active: 1 },
  },
];

// --- Rule examples: one write that breaks each rule, so that every rule id is seen at work ---

const T2 = secondsAfterEpoch(180);
const trueCondition = (type: string): JobCondition => ({
  type,
  status: 'True',
  reason: 'Example',
  message: 'a rule example',
  lastTransitionTime: T1,
});
const conditions = (...types: string[]): JobCondition[] => types.map(trueCondition);
const single: Partial<JobSpec> = { completions: 1, parallelism: 1 };
const indexed: Partial<JobSpec> = { completionMode: 'Indexed', completions: 3, parallelism: 3 };
const perIndex: Partial<JobSpec> = { ...indexed, backoffLimitPerIndex: 1 };
const running: JobStatus = { startTime: T0, active: 1, ready: 0 };
const failedJob: JobStatus = {
  startTime: T0,
  failed: 1,
  conditions: conditions('FailureTarget', 'Failed'),
};
const completeJob: JobStatus = {
  startTime: T0,
  completionTime: T1,
  succeeded: 1,
  conditions: conditions('SuccessCriteriaMet', 'Complete'),
};

/**
 * The one rule no update can reach through a v1.35 apiserver: its old status (Complete=True
 * without SuccessCriteriaMet=True, as Jobs finished before v1.31 were stored) cannot be written,
 * since 'complete-requires-success-criteria-met' refuses it. Its example shows exactly that.
 */
const unreachableRules: Partial<Record<JobStatusRuleId, JobStatusRuleId>> = {
  'success-criteria-met-not-after-complete': 'complete-requires-success-criteria-met',
};

const ruleExamples: Transition[] = (
  [
    // A counter that does not fit an int32: the apiserver cannot decode it (400).
    ['status-shape', single, running, { ...running, active: 2 ** 31 }],
    ['counters-non-negative', single, running, { ...running, failed: -1 }],
    [
      'uncounted-pod-uids-valid',
      single,
      running,
      { ...running, uncountedTerminatedPods: { succeeded: ['pod-a'], failed: ['pod-a'] } },
    ],
    [
      'complete-excludes-failed',
      single,
      failedJob,
      { ...failedJob, completionTime: T1, conditions: conditions('FailureTarget', 'Failed', 'Complete') },
    ],
    [
      'complete-excludes-failure-target',
      single,
      running,
      {
        startTime: T0,
        completionTime: T1,
        succeeded: 1,
        conditions: conditions('FailureTarget', 'Complete'),
      },
    ],
    ['completion-time-requires-complete', single, running, { ...running, completionTime: T1 }],
    [
      'complete-requires-completion-time',
      single,
      running,
      { startTime: T0, succeeded: 1, conditions: conditions('SuccessCriteriaMet', 'Complete') },
    ],
    [
      'completion-time-not-before-start-time',
      single,
      { ...running, startTime: T1 },
      { ...completeJob, startTime: T1, completionTime: T0 },
    ],
    [
      'failed-requires-failure-target',
      single,
      running,
      { startTime: T0, failed: 1, conditions: conditions('Failed') },
    ],
    [
      'complete-requires-success-criteria-met',
      single,
      running,
      { startTime: T0, completionTime: T1, succeeded: 1, conditions: conditions('Complete') },
    ],
    [
      'finished-requires-no-active',
      single,
      { ...running, conditions: conditions('SuccessCriteriaMet') },
      { ...completeJob, active: 1 },
    ],
    [
      'finished-requires-start-time',
      single,
      {},
      { failed: 1, conditions: conditions('FailureTarget', 'Failed') },
    ],
    [
      'finished-requires-no-uncounted-pods',
      single,
      { ...running, conditions: conditions('SuccessCriteriaMet') },
      { ...completeJob, uncountedTerminatedPods: { succeeded: ['pod-late'], failed: [] } },
    ],
    ['completed-indexes-format', indexed, running, { ...running, completedIndexes: '3' }],
    ['failed-indexes-format', perIndex, running, { ...running, failedIndexes: '2,1' }],
    [
      'completed-indexes-require-indexed',
      { completions: 3, parallelism: 3 },
      running,
      { ...running, completedIndexes: '0' },
    ],
    ['failed-indexes-require-backoff-limit-per-index', indexed, running, { ...running, failedIndexes: '0' }],
    [
      'failed-indexes-not-overlapping-completed',
      perIndex,
      running,
      { ...running, completedIndexes: '0', failedIndexes: '0' },
    ],
    [
      'finished-requires-no-terminating',
      single,
      { ...running, conditions: conditions('FailureTarget') },
      { ...failedJob, terminating: 1 },
    ],
    ['ready-not-above-active', single, running, { ...running, ready: 2 }],
    [
      'success-criteria-met-excludes-failed',
      single,
      failedJob,
      { ...failedJob, conditions: conditions('FailureTarget', 'Failed', 'SuccessCriteriaMet') },
    ],
    [
      'success-criteria-met-excludes-failure-target',
      single,
      running,
      { ...running, conditions: conditions('FailureTarget', 'SuccessCriteriaMet') },
    ],
    [
      'success-policy-complete-requires-success-criteria-met',
      { ...indexed, successPolicy: { rules: [{ succeededIndexes: '0' }] } },
      running,
      {
        startTime: T0,
        completionTime: T1,
        succeeded: 1,
        completedIndexes: '0',
        conditions: conditions('Complete'),
      },
    ],
    [
      'terminal-condition-stays-true',
      single,
      failedJob,
      { ...failedJob, conditions: conditions('FailureTarget') },
    ],
    ['failed-never-decreases', single, { ...running, failed: 2 }, { ...running, failed: 1 }],
    [
      'succeeded-never-decreases',
      { completions: 3, parallelism: 1 },
      { ...running, succeeded: 2 },
      { ...running, succeeded: 1 },
    ],
    ['completion-time-immutable', single, completeJob, { ...completeJob, completionTime: T2 }],
    ['start-time-immutable-unless-suspended', single, running, { ...running, startTime: T1 }],
    [
      'success-criteria-met-stays-true',
      single,
      { ...running, conditions: conditions('SuccessCriteriaMet') },
      { ...running, conditions: [] },
    ],
    [
      'success-criteria-met-not-after-complete',
      single,
      { startTime: T0, completionTime: T1, succeeded: 1, conditions: conditions('Complete') },
      completeJob,
    ],
  ] satisfies [JobStatusRuleId, Partial<JobSpec>, JobStatus, JobStatus][]
).map(([covers, spec, oldStatus, newStatus]) => ({
  label: `[rule] ${covers}`,
  covers,
  spec,
  oldStatus,
  newStatus,
}));

// --- Which rules the apiserver names ---

interface ApiserverCause {
  field?: string;
  message?: string;
}

/**
 * How kube-apiserver v1.35.4 words each rule in the causes of its 422 (validation.go: the field
 * path and the rule's own message). 'status-shape' has no cause: the apiserver cannot decode the
 * body and answers 400. Typed over every rule id, so a new rule does not compile until mapped.
 */
const apiserverWording: Record<JobStatusRuleId, { field: RegExp; message: RegExp } | 'http-400'> = {
  'status-shape': 'http-400',
  'counters-non-negative': {
    field: /^status\.(active|succeeded|failed|ready|terminating)$/,
    message: /must be greater than or equal to 0/,
  },
  'uncounted-pod-uids-valid': {
    field: /^status\.uncountedTerminatedPods\.(succeeded|failed)\[\d+\]$/,
    message: /must not be empty|^Duplicate value/,
  },
  'complete-excludes-failed': {
    field: /^status\.conditions$/,
    message: /cannot set Complete=True and Failed=true conditions/,
  },
  'complete-excludes-failure-target': {
    field: /^status\.conditions$/,
    message: /cannot set Complete=True and FailureTarget=true conditions/,
  },
  'completion-time-requires-complete': {
    field: /^status\.completionTime$/,
    message: /cannot set completionTime when there is no Complete=True condition/,
  },
  'complete-requires-completion-time': {
    field: /^status\.completionTime$/,
    message: /completionTime is required for Complete jobs/,
  },
  'completion-time-not-before-start-time': {
    field: /^status\.completionTime$/,
    message: /must be equal to or after `startTime`/,
  },
  'failed-requires-failure-target': {
    field: /^status\.conditions$/,
    message: /cannot set Failed=True condition without the FailureTarget=true condition/,
  },
  'complete-requires-success-criteria-met': {
    field: /^status\.conditions$/,
    message: /cannot set Complete=True condition without the SuccessCriteriaMet=true condition/,
  },
  'finished-requires-no-active': {
    field: /^status\.active$/,
    message: /active>0 is invalid for finished job/,
  },
  'finished-requires-start-time': {
    field: /^status\.startTime$/,
    message: /startTime is required for finished job/,
  },
  'finished-requires-no-uncounted-pods': {
    field: /^status\.uncountedTerminatedPods$/,
    message: /must be empty for finished job/,
  },
  'completed-indexes-format': {
    field: /^status\.completedIndexes$/,
    message: /error parsing completedIndexes/,
  },
  'failed-indexes-format': { field: /^status\.failedIndexes$/, message: /error parsing failedIndexes/ },
  'completed-indexes-require-indexed': {
    field: /^status\.completedIndexes$/,
    message: /cannot set non-empty completedIndexes when non-indexed completion mode/,
  },
  'failed-indexes-require-backoff-limit-per-index': {
    field: /^status\.failedIndexes$/,
    message: /cannot set non-null failedIndexes when backoffLimitPerIndex is null/,
  },
  'failed-indexes-not-overlapping-completed': {
    field: /^status\.failedIndexes$/,
    message: /failedIndexes and completedIndexes overlap at index/,
  },
  'finished-requires-no-terminating': {
    field: /^status\.terminating$/,
    message: /terminating>0 is invalid for finished job/,
  },
  'ready-not-above-active': { field: /^status\.ready$/, message: /cannot set more ready pods than active/ },
  'success-criteria-met-excludes-failed': {
    field: /^status\.conditions$/,
    message: /cannot set SuccessCriteriaMet=True and Failed=true conditions/,
  },
  'success-criteria-met-excludes-failure-target': {
    field: /^status\.conditions$/,
    message: /cannot set SuccessCriteriaMet=True and FailureTarget=true conditions/,
  },
  'success-policy-complete-requires-success-criteria-met': {
    field: /^status\.conditions$/,
    message: /cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True/,
  },
  'terminal-condition-stays-true': {
    field: /^status\.conditions$/,
    message: /cannot disable the terminal (Failed|Complete|FailureTarget)=True condition/,
  },
  'failed-never-decreases': { field: /^status\.failed$/, message: /cannot decrease the failed counter/ },
  'succeeded-never-decreases': {
    field: /^status\.succeeded$/,
    message: /cannot decrease the succeeded counter/,
  },
  'completion-time-immutable': { field: /^status\.completionTime$/, message: /field is immutable/ },
  'start-time-immutable-unless-suspended': {
    field: /^status\.startTime$/,
    message: /startTime cannot be removed for unsuspended job/,
  },
  'success-criteria-met-stays-true': {
    field: /^status\.conditions$/,
    message: /cannot disable the SuccessCriteriaMet=True condition/,
  },
  'success-criteria-met-not-after-complete': {
    field: /^status\.conditions$/,
    message: /cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions/,
  },
};

/** The rule id of one apiserver cause, or undefined when no rule's wording matches it. */
function ruleOfCause(cause: ApiserverCause): JobStatusRuleId | undefined {
  return jobStatusRuleIds.find((rule) => {
    const wording = apiserverWording[rule];
    return (
      wording !== 'http-400' &&
      wording.field.test(cause.field ?? '') &&
      wording.message.test(cause.message ?? '')
    );
  });
}

// --- Sending them to the apiserver ---

type Outcome =
  /** The apiserver refused the old status itself; the sample cannot be tried. */
  | { kind: 'skipped'; transition: Transition; setup: Verdict }
  | { kind: 'tried'; transition: Transition; setup: Verdict; update: Verdict };

interface Verdict {
  spec: JobSpec;
  oldStatus: JobStatus;
  newStatus: JobStatus;
  violations: StatusRuleViolation[];
  httpStatus: number;
  apiserverMessage?: string;
  /** The rules the apiserver named, from its causes (422) or its refusal to decode (400). */
  apiserverRules: JobStatusRuleId[];
  /** Causes no rule's wording matches: a gap in apiserverWording, reported as a disagreement. */
  unmappedCauses: ApiserverCause[];
  stored?: Job;
}

const sameRules = (verdict: Verdict): boolean => {
  const ours = new Set(verdict.violations.map((v) => v.rule));
  const theirs = new Set(verdict.apiserverRules);
  return ours.size === theirs.size && [...ours].every((rule) => theirs.has(rule));
};

/** The same verdict, and for a rejection the same rules, every cause accounted for. */
const agree = (verdict: Verdict): boolean =>
  (verdict.violations.length === 0) === (verdict.httpStatus === 200) &&
  verdict.unmappedCauses.length === 0 &&
  sameRules(verdict);

function parsedBody(body: unknown): { message?: string; details?: { causes?: ApiserverCause[] } } {
  if (typeof body === 'string') {
    try {
      return JSON.parse(body);
    } catch {
      return { message: body };
    }
  }
  return (body as { message?: string } | undefined) ?? {};
}

/** One /status write, judged first by the validator (against the stored job) and then by the apiserver. */
async function judge(clients: ClusterClients, stored: Job, newStatus: JobStatus): Promise<Verdict> {
  const spec = stored.spec!;
  const oldStatus = stored.status ?? {};
  const violations = validateJobStatusTransition({ spec, oldStatus, newStatus });
  try {
    const written = await clients.jobs.replaceStatus({ ...stored, status: newStatus });
    return {
      spec,
      oldStatus,
      newStatus,
      violations,
      httpStatus: 200,
      apiserverRules: [],
      unmappedCauses: [],
      stored: written,
    };
  } catch (err) {
    const { code, body } = err as { code?: unknown; body?: unknown };
    const parsed = parsedBody(body);
    const message = parsed.message ?? JSON.stringify(body);
    // A body it cannot decode as a Job is 'status-shape'.
    if (code === 400 && /cannot be handled as a Job/.test(message)) {
      return {
        spec,
        oldStatus,
        newStatus,
        violations,
        httpStatus: 400,
        apiserverMessage: message,
        apiserverRules: ['status-shape'],
        unmappedCauses: [],
      };
    }
    // 422 is the verdict we test; anything else (another 400, 409, 5xx) is a broken test, not a disagreement.
    if (code !== 422) throw err;
    const causes = parsed.details?.causes ?? [];
    const named = causes.map((cause) => ({ cause, rule: ruleOfCause(cause) }));
    return {
      spec,
      oldStatus,
      newStatus,
      violations,
      httpStatus: 422,
      apiserverMessage: message,
      apiserverRules: [...new Set(named.flatMap(({ rule }) => (rule ? [rule] : [])))],
      unmappedCauses: named.filter(({ rule }) => !rule).map(({ cause }) => cause),
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
    `  apiserver rules: ${verdict.apiserverRules.join(', ') || '-'}${
      verdict.unmappedCauses.length > 0
        ? `; causes matching no rule: ${JSON.stringify(verdict.unmappedCauses)}`
        : ''
    }`,
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
    const transitions = [...fixedExamples, ...ruleExamples, ...generated];
    const began = Date.now();

    const outcomes = await mapConcurrently(
      transitions,
      CONCURRENCY,
      async (transition, index): Promise<Outcome> => {
        // Each sample gets its own Job, so its status history is exactly old -> new.
        const job = plainJson(sandboxJob({ name: `agree-${index}`, managedBy: agreementManagedBy }));
        const created = await management.jobs.create(namespace, {
          ...job,
          spec: { ...job.spec!, ...transition.spec },
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
    const rejected = tried.filter((o) => o.update.httpStatus !== 200);
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

    // Each rule example is rejected by the rule it was written for, named by both sides (agreement
    // above); the unreachable rule's example has its old status refused by the predicted rule.
    const misses = ruleExamples.flatMap((example) => {
      const outcome = outcomes[transitions.indexOf(example)];
      const refusedBy = unreachableRules[example.covers!];
      if (refusedBy) {
        return outcome?.kind === 'skipped' && outcome.setup.apiserverRules.includes(refusedBy)
          ? []
          : [`${example.label}: expected the apiserver to refuse its old status by ${refusedBy}`];
      }
      if (outcome?.kind === 'tried' && outcome.update.apiserverRules.includes(example.covers!)) return [];
      const got =
        outcome?.kind === 'tried'
          ? `apiserver ${outcome.update.httpStatus} naming ${outcome.update.apiserverRules.join(', ') || 'no rule'}`
          : `old status refused: ${outcome?.setup.apiserverMessage}`;
      return [`${example.label}: ${got}`];
    });
    expect(misses, `rule examples that missed their rule:\n${misses.join('\n')}`).toEqual([]);

    // Every rule id seen rejecting a write (the unreachable one: seen refusing its precondition).
    const judged = outcomes.flatMap((o) => (o.kind === 'tried' ? [o.setup, o.update] : [o.setup]));
    const covered = new Set<string>([
      ...judged.filter(agree).flatMap((v) => v.apiserverRules),
      ...Object.entries(unreachableRules).flatMap(([rule, refusedBy]) =>
        outcomes.some(
          (o) =>
            o.kind === 'skipped' &&
            o.transition.covers === rule &&
            agree(o.setup) &&
            o.setup.apiserverRules.includes(refusedBy),
        )
          ? [rule]
          : [],
      ),
    ]);
    const uncovered = jobStatusRuleIds.filter((rule) => !covered.has(rule));
    expect(uncovered, `rule ids never seen rejecting a write: ${uncovered.join(', ')}`).toEqual([]);
    const fromGenerated = new Set(
      outcomes
        .filter((o) => o.transition.covers === undefined && !o.transition.expected)
        .flatMap((o) => (o.kind === 'tried' ? [o.setup, o.update] : [o.setup]))
        .filter(agree)
        .flatMap((v) => v.apiserverRules),
    );
    console.log(
      `[agreement] all ${jobStatusRuleIds.length} rule ids seen rejecting a write; the generated sample alone ` +
        `reached ${fromGenerated.size}, missing: ${jobStatusRuleIds.filter((r) => !fromGenerated.has(r)).join(', ')}`,
    );

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
