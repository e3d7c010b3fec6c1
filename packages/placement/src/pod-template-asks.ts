// What a workload's pod templates ask of a worker beyond resources: the host access and the
// identity its pods would run with. A WorkerCluster may refuse some of it (pod-restrictions.ts);
// Pod Security admission on the worker judges the rest. Pure: the templates come from each
// kind's adapter (`podTemplates`), with what its controller adds to the pods it creates.
import type { PodSpec } from '@jobrelay/kube';

/** One pod template of a workload, as the pods its controller creates from it will be. */
export interface WorkloadPodTemplate {
  /**
   * Which template, for messages: empty for a kind with one (a Job's), else what it is to the
   * workload (`head group`, `worker group gpu`, `submitter`).
   */
  role: string;
  spec: PodSpec;
  /**
   * When the pods do not run as the template's serviceAccountName: the account their controller
   * gives them (`name`), or why it is not known before the pods exist (`unknown`).
   */
  serviceAccount?: { name: string } | { unknown: string };
}

/** A service account a template's pods run as (`role`: the template's); `unknown` says why its name is not known yet. */
export type AskedServiceAccount = { role: string } & ({ name: string } | { unknown: string });

/** What the templates ask for; each entry says where, for messages (`container main in the head group`). */
export interface PodTemplateAsks {
  /** Containers (init and ephemeral ones too) whose securityContext.privileged is true. */
  privileged: string[];
  /** Volumes of type hostPath. */
  hostPathVolumes: string[];
  /** hostNetwork, hostPID and hostIPC that are true. */
  hostNamespaces: string[];
  /** spec.nodeName, which binds the pods to one node by name and skips the scheduler. */
  nodeNames: string[];
  /** Every template's service account (`default` when it names none). */
  serviceAccounts: AskedServiceAccount[];
  /** The kind does not say where its pod templates are: what they ask cannot be known. */
  templatesUnknown: boolean;
}

export const noPodTemplateAsks: PodTemplateAsks = {
  privileged: [],
  hostPathVolumes: [],
  hostNamespaces: [],
  nodeNames: [],
  serviceAccounts: [],
  templatesUnknown: false,
};

/** The pod's service account when its template names none (the ServiceAccount admission plugin's default). */
export const defaultServiceAccount = 'default';

/**
 * The summary of every template: privileged containers (init and ephemeral included),
 * hostPath volumes, host namespaces, nodeName, and the service account of each. Undefined
 * templates (a kind that does not say where they are) ask what cannot be known.
 */
export function podTemplateAsks(templates: readonly WorkloadPodTemplate[] | undefined): PodTemplateAsks {
  const asks: PodTemplateAsks = {
    privileged: [],
    hostPathVolumes: [],
    hostNamespaces: [],
    nodeNames: [],
    serviceAccounts: [],
    templatesUnknown: templates === undefined,
  };
  for (const { role, spec, serviceAccount } of templates ?? []) {
    const where = (what: string) => (role ? `${what} in the ${role}` : what);
    const containers = [
      ...(spec.initContainers ?? []).map((c) => ({ c, kind: 'init container' })),
      ...(spec.containers ?? []).map((c) => ({ c, kind: 'container' })),
      ...(spec.ephemeralContainers ?? []).map((c) => ({ c, kind: 'ephemeral container' })),
    ];
    for (const { c, kind } of containers)
      if (c.securityContext?.privileged === true) asks.privileged.push(where(`${kind} ${c.name}`));
    for (const volume of spec.volumes ?? [])
      if (volume.hostPath) asks.hostPathVolumes.push(where(`volume ${volume.name}`));
    for (const field of ['hostNetwork', 'hostPID', 'hostIPC'] as const)
      if (spec[field] === true) asks.hostNamespaces.push(where(field));
    if (spec.nodeName) asks.nodeNames.push(where(`nodeName ${spec.nodeName}`));
    // deprecatedServiceAccount (serviceAccount) is what the apiserver copies into
    // serviceAccountName when only it is set.
    const named = spec.serviceAccountName || spec.serviceAccount || defaultServiceAccount;
    asks.serviceAccounts.push({ role, ...(serviceAccount ?? { name: named }) });
  }
  return asks;
}
