// What a WorkerCluster refuses beyond Pod Security (its spec.podRestrictions): a worker's
// admin may keep privileged, host-level or node-pinned pods off the cluster, or allow only some
// service accounts, whatever the namespace's Pod Security level says. Checked by placement
// against what the workload's pod templates ask (pod-template-asks.ts), so a refused workload
// waits, or goes elsewhere, with the reason.
import { z } from 'zod';
import { type AskedServiceAccount, noPodTemplateAsks, type PodTemplateAsks } from './pod-template-asks.ts';

/** A ServiceAccount name: a DNS-1123 subdomain (k8s.io/apimachinery validation). */
const serviceAccountName = z
  .string()
  .max(253, 'must be at most 253 characters')
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/,
    'must be a ServiceAccount name: lowercase letters, digits, "-" and ".", starting and ending with a letter or digit',
  );

/**
 * spec.podRestrictions of a WorkerCluster, as the CRD's schema states it (the apiserver refuses
 * anything else; this is the controller's own check of what it reads). Absent fields restrict
 * nothing.
 */
const flag = z.boolean({ error: 'must be true or false' }).optional();

export const podRestrictionsSchema = z
  .object({
    /** No container (init and ephemeral ones too) with securityContext.privileged. */
    refusePrivileged: flag,
    /** No hostPath volume. */
    refuseHostPath: flag,
    /** No hostNetwork, hostPID or hostIPC. */
    refuseHostNamespaces: flag,
    /** No spec.nodeName (pods bound to a node by name, past the scheduler). */
    refuseNodeName: flag,
    /** Pods run only as these ServiceAccounts (of their own namespace); absent: any. */
    allowedServiceAccounts: z
      .array(serviceAccountName, { error: 'must be a list of ServiceAccount names' })
      .min(1, 'must list at least one name (absent allows any)')
      .max(100, 'must list at most 100 names')
      .optional(),
  })
  .strict();

export type PodRestrictions = z.infer<typeof podRestrictionsSchema>;

export type PodRestrictionsRead =
  | { ok: true; restrictions: PodRestrictions | undefined }
  | { ok: false; problem: string };

/** Reads spec.podRestrictions (absent: none), with a problem naming the field when it does not parse. */
export function readPodRestrictions(value: unknown): PodRestrictionsRead {
  if (value === undefined || value === null) return { ok: true, restrictions: undefined };
  const parsed = podRestrictionsSchema.safeParse(value);
  if (parsed.success) return { ok: true, restrictions: parsed.data };
  const problem = parsed.error.issues
    .map((issue) => {
      const field = [
        'spec.podRestrictions',
        ...issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)),
      ]
        .join('')
        .replace(/\.\[/g, '[');
      const message =
        issue.code === 'unrecognized_keys' ? `unknown field ${issue.keys.join(', ')}` : issue.message;
      return `${field}: ${message}`;
    })
    .join('; ');
  return { ok: false, problem };
}

function restrictsAnything(restrictions: PodRestrictions): boolean {
  return (
    restrictions.refusePrivileged === true ||
    restrictions.refuseHostPath === true ||
    restrictions.refuseHostNamespaces === true ||
    restrictions.refuseNodeName === true ||
    restrictions.allowedServiceAccounts !== undefined
  );
}

function serviceAccountText(account: AskedServiceAccount): string {
  const where = account.role ? ` in the ${account.role}` : '';
  return 'name' in account
    ? `service account ${account.name}${where}`
    : `a service account ${account.unknown}${where}`;
}

/** What of `asks` these restrictions refuse: the refused subset of each kind of ask. */
export function refusedAsks(
  restrictions: PodRestrictions | undefined,
  asks: PodTemplateAsks,
): PodTemplateAsks {
  if (!restrictions || !restrictsAnything(restrictions)) return noPodTemplateAsks;
  const allowed = restrictions.allowedServiceAccounts;
  return {
    templatesUnknown: asks.templatesUnknown,
    privileged: restrictions.refusePrivileged ? asks.privileged : [],
    hostPathVolumes: restrictions.refuseHostPath ? asks.hostPathVolumes : [],
    hostNamespaces: restrictions.refuseHostNamespaces ? asks.hostNamespaces : [],
    nodeNames: restrictions.refuseNodeName ? asks.nodeNames : [],
    serviceAccounts: allowed
      ? asks.serviceAccounts.filter((a) => !('name' in a) || !allowed.includes(a.name))
      : [],
  };
}

/**
 * The refusal that names refused asks (`refuses privileged pods (container main)`), or
 * undefined when there are none; the first kind of ask refused is the reason, in a fixed order:
 * templates that cannot be read, privileged, hostPath, host namespaces, nodeName, service
 * accounts.
 */
export function describeRefusal(refused: PodTemplateAsks): string | undefined {
  if (refused.templatesUnknown) return 'refuses workloads whose pod templates jobrelay cannot read';
  if (refused.privileged.length > 0) return `refuses privileged pods (${refused.privileged.join(', ')})`;
  if (refused.hostPathVolumes.length > 0)
    return `refuses hostPath volumes (${refused.hostPathVolumes.join(', ')})`;
  if (refused.hostNamespaces.length > 0)
    return `refuses host namespaces (${refused.hostNamespaces.join(', ')})`;
  if (refused.nodeNames.length > 0)
    return `refuses pods bound to a node by name (${refused.nodeNames.join(', ')})`;
  if (refused.serviceAccounts.length > 0)
    return `does not allow ${refused.serviceAccounts.map(serviceAccountText).join(', ')}`;
  return undefined;
}

/**
 * Why a cluster with these restrictions refuses a workload that asks `asks`, naming what it
 * asks (`refuses privileged pods (container main)`), or undefined when it does not. A cluster
 * that restricts anything refuses a workload whose templates cannot be read, rather than guess
 * that they ask nothing.
 */
export function podRestrictionRefusal(
  restrictions: PodRestrictions | undefined,
  asks: PodTemplateAsks,
): string | undefined {
  return describeRefusal(refusedAsks(restrictions, asks));
}

/**
 * What `after` asks that these restrictions refuse and `before` did not already ask: a spec
 * change of a running workload (a RayCluster's worker group template) is judged by what it
 * adds, so a workload placed before its cluster restricted anything keeps its own changes (a
 * suspend, a replica count) flowing, and gains nothing new.
 */
export function newlyRefusedAsks(
  restrictions: PodRestrictions | undefined,
  before: PodTemplateAsks,
  after: PodTemplateAsks,
): PodTemplateAsks {
  const was = refusedAsks(restrictions, before);
  const now = refusedAsks(restrictions, after);
  const added = (a: readonly string[], b: readonly string[]) => a.filter((x) => !b.includes(x));
  const key = (a: AskedServiceAccount) => JSON.stringify(a);
  return {
    templatesUnknown: now.templatesUnknown && !was.templatesUnknown,
    privileged: added(now.privileged, was.privileged),
    hostPathVolumes: added(now.hostPathVolumes, was.hostPathVolumes),
    hostNamespaces: added(now.hostNamespaces, was.hostNamespaces),
    nodeNames: added(now.nodeNames, was.nodeNames),
    serviceAccounts: now.serviceAccounts.filter((a) => !was.serviceAccounts.map(key).includes(key(a))),
  };
}
