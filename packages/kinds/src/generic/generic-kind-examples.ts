// Ready-made generic configurations. Their API facts (groups, versions, condition types,
// managedBy rules) come from the projects' Go types as published. jobSetKind is run against
// JobSet v0.9.1's real controller with its webhooks in the e2e suite (verifiedGenericKinds);
// the others' controllers are NOT run here: treat each as a starting point and verify it
// against the version you run.
import type { GenericKindConfigInput } from './generic-kind-config.ts';

/**
 * Kubernetes JobSet (jobset.x-k8s.io/v1alpha2). managedBy takes any domain-prefixed path
 * (immutable; the controller's own is jobset.sigs.k8s.io/jobset-controller), so jobrelay's
 * usual value is claimed. Finished: condition Completed or Failed is True (status.terminalState
 * says the same). Each replicated Job runs `replicas` Jobs of `parallelism` pods at most
 * (completions may cap it lower; not modelled). Verified against JobSet v0.9.1's controller
 * with its webhooks (e2e/test/jobset-generic.test.ts): a JobSet that succeeds and one that fails
 * after a restart end on the management cluster as their mirrors end, and as direct runs do.
 */
export const jobSetKind = {
  name: 'jobset',
  group: 'jobset.x-k8s.io',
  version: 'v1alpha2',
  kind: 'JobSet',
  plural: 'jobsets',
  managedBy: { default: 'jobrelay.dev/dispatcher' },
  finishedConditions: [
    { type: 'Completed', status: 'True' },
    { type: 'Failed', status: 'True' },
  ],
  suspendField: 'spec.suspend',
  podSets: [
    {
      each: 'spec.replicatedJobs',
      template: 'template.spec.template',
      count: [
        { path: 'replicas', default: 1 },
        { path: 'template.spec.parallelism', default: 1 },
      ],
    },
  ],
  podLabel: 'jobset.sigs.k8s.io/jobset-name',
} satisfies GenericKindConfigInput;

/**
 * Kubeflow Trainer v2 TrainJob (trainer.kubeflow.org/v1alpha1). Its CRD's CEL rule accepts
 * only trainer.kubeflow.org/trainjob-controller (the controller's own) and
 * kueue.x-k8s.io/multikueue, so the MultiKueue value is claimed, as for Ray kinds. Finished:
 * Complete or Failed True. Its pods come from the referenced (Cluster)TrainingRuntime, not
 * the TrainJob, so no pod demand is given (it fits anywhere) and its templates cannot be read
 * (a WorkerCluster with podRestrictions refuses it). It runs them as a JobSet of its own name,
 * so its pods carry that JobSet's name label.
 */
export const trainJobKind = {
  name: 'trainjob',
  group: 'trainer.kubeflow.org',
  version: 'v1alpha1',
  kind: 'TrainJob',
  plural: 'trainjobs',
  managedBy: { default: 'kueue.x-k8s.io/multikueue', accepted: ['kueue.x-k8s.io/multikueue'] },
  finishedConditions: [
    { type: 'Complete', status: 'True' },
    { type: 'Failed', status: 'True' },
  ],
  suspendField: 'spec.suspend',
  podLabel: 'jobset.sigs.k8s.io/jobset-name',
} satisfies GenericKindConfigInput;

/**
 * AppWrapper (workload.codeflare.dev/v1beta2). Finished is a phase, not a condition:
 * status.phase Succeeded or Failed. Which managedBy values its CRD accepts was not confirmed
 * here; the MultiKueue value, which Kueue's AppWrapper integration uses, is claimed. Each
 * component declares its own pod sets (paths inside its template), which a static
 * configuration cannot follow: no pod demand. Its controller labels the pods it wraps with
 * the AppWrapper's name.
 */
export const appWrapperKind = {
  name: 'appwrapper',
  group: 'workload.codeflare.dev',
  version: 'v1beta2',
  kind: 'AppWrapper',
  plural: 'appwrappers',
  managedBy: { default: 'kueue.x-k8s.io/multikueue' },
  finishedFields: [{ path: 'status.phase', values: ['Succeeded', 'Failed'] }],
  suspendField: 'spec.suspend',
  podLabel: 'workload.codeflare.dev/appwrapper',
} satisfies GenericKindConfigInput;

/**
 * Tekton PipelineRun (tekton.dev/v1). spec.managedBy is immutable; unset or
 * tekton.dev/pipeline means Tekton's own controller. Finished: the Succeeded condition is True
 * or False (Unknown while running). There is no boolean suspend (spec.status
 * "PipelineRunPending" holds a run before it starts and is not modelled); spec.status flows
 * down so cancelling (Cancelled, CancelledRunFinally, StoppedRunFinally) reaches the mirror.
 * Its pods are per task, from the Pipeline: no pod demand; Tekton labels each with its run.
 */
export const pipelineRunKind = {
  name: 'pipelinerun',
  group: 'tekton.dev',
  version: 'v1',
  kind: 'PipelineRun',
  plural: 'pipelineruns',
  managedBy: { default: 'jobrelay.dev/dispatcher' },
  finishedConditions: [
    { type: 'Succeeded', status: 'True' },
    { type: 'Succeeded', status: 'False' },
  ],
  mutableSpecFields: ['status'],
  podLabel: 'tekton.dev/pipelineRun',
} satisfies GenericKindConfigInput;

/** Every example, by name. */
export const genericKindExamples = {
  jobset: jobSetKind,
  trainjob: trainJobKind,
  appwrapper: appWrapperKind,
  pipelinerun: pipelineRunKind,
} as const;

/**
 * The examples run against their kind's real controller in this repository's e2e suite: a
 * configuration equal to one of them (defaults applied) is labelled `real-controller`.
 */
export const verifiedGenericKinds: readonly GenericKindConfigInput[] = [jobSetKind];
