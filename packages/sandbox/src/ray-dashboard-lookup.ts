// K8sJobMode for the simulated Ray dashboard: a real submitter pod runs `ray job submit
// --submission-id <RayJob status.jobId> ... -- <entrypoint>` against the head's dashboard.
// Under KWOK that pod runs nothing, so when the operator asks for a job id the dashboard has
// never seen, it looks in the cluster for the RayJob with that status.jobId and takes the
// start of its submitter pod (the Job of the same name) as the submission.
import { readFileSync } from 'node:fs';
import { type KubeTarget, kubeGetJson } from './kube-http.ts';
import type { SubmittedElsewhere } from './ray-dashboard.ts';
import { SandboxLayout } from './sandbox-layout.ts';
import { readState } from './sandbox-state.ts';

interface RayJobObject {
  metadata?: { name?: string };
  spec?: { entrypoint?: string; metadata?: Record<string, string>; submissionMode?: string };
  status?: { jobId?: string };
}

interface ContainerState {
  running?: { startedAt?: string };
  terminated?: { startedAt?: string; exitCode?: number };
}

export interface PodObject {
  status?: { phase?: string; containerStatuses?: { state?: ContainerState }[] };
}

/** The RayJob submitted in K8sJobMode (the default) whose status.jobId is `submissionId`. */
export function k8sJobModeRayJob(items: RayJobObject[], submissionId: string): RayJobObject | undefined {
  return items.find(
    (item) =>
      item.status?.jobId === submissionId && (item.spec?.submissionMode ?? 'K8sJobMode') === 'K8sJobMode',
  );
}

/**
 * When a submitter would have submitted: the earliest start of a submitter container that is
 * running or ended with exit 0. A submitter that failed (sandbox.jobrelay.dev/exit-code on
 * spec.submitterPodTemplate) never submitted; undefined while none has started.
 */
export function submittedAtFromSubmitterPods(pods: PodObject[]): number | undefined {
  const starts = pods.flatMap((pod) =>
    (pod.status?.containerStatuses ?? []).flatMap(({ state }) => {
      const startedAt =
        state?.running?.startedAt ??
        (state?.terminated?.exitCode === 0 ? state.terminated.startedAt : undefined);
      return startedAt ? [Date.parse(startedAt)] : [];
    }),
  );
  return starts.length > 0 ? Math.min(...starts) : undefined;
}

/** lookupSubmittedJob for a sandbox: reads the cluster's apiserver port from its state at each call. */
export function sandboxSubmitterLookup(sandboxDir: string) {
  const layout = new SandboxLayout(sandboxDir);
  return async (
    cluster: string,
    namespace: string,
    submissionId: string,
  ): Promise<SubmittedElsewhere | undefined> => {
    const state = readState(layout.stateFile);
    const clusterState = state?.clusters.find((c) => c.name === cluster);
    if (!clusterState) return undefined;
    const target: KubeTarget = {
      server: `https://127.0.0.1:${clusterState.apiserverPort}`,
      caPem: readFileSync(`${layout.pkiDir}/ca.crt`, 'utf8'),
      token: readFileSync(layout.tokenFile('admin'), 'utf8').trim(),
    };
    const ns = encodeURIComponent(namespace);
    const rayJobs = await kubeGetJson<{ items: RayJobObject[] }>(
      target,
      `/apis/ray.io/v1/namespaces/${ns}/rayjobs`,
    );
    const rayJob = k8sJobModeRayJob(rayJobs.items, submissionId);
    const name = rayJob?.metadata?.name;
    if (!rayJob || !name) return undefined;
    const selector = encodeURIComponent(`batch.kubernetes.io/job-name=${name}`);
    const pods = await kubeGetJson<{ items: PodObject[] }>(
      target,
      `/api/v1/namespaces/${ns}/pods?labelSelector=${selector}`,
    );
    const submittedAtMs = submittedAtFromSubmitterPods(pods.items);
    if (submittedAtMs === undefined) return undefined;
    return {
      entrypoint: rayJob.spec?.entrypoint ?? '',
      ...(rayJob.spec?.metadata ? { metadata: rayJob.spec.metadata } : {}),
      submittedAtMs,
    };
  };
}
