// What a WorkerCluster refuses beyond Pod Security (its spec.podRestrictions): a worker's
// admin may keep privileged, host-level or node-pinned pods off the cluster, or allow only some
// service accounts, whatever the namespace's Pod Security level says. Checked by placement
// against what the workload's pod templates ask (pod-template-asks.ts), so a refused workload
// waits, or goes elsewhere, with the reason.
import { z } from 'zod';
import type { AskedServiceAccount, PodTemplateAsks } from './pod-template-asks.ts';

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

/**
 * Why a cluster with these restrictions refuses a workload that asks `asks`, naming what it
 * asks (`refuses privileged pods (container main)`), or undefined when it does not. The first
 * refused ask is the reason, in a fixed order: privileged, hostPath, host namespaces,
 * nodeName, service accounts. A cluster that restricts anything refuses a workload whose
 * templates cannot be read, rather than guess that they ask nothing.
 */
export function podRestrictionRefusal(
  restrictions: PodRestrictions | undefined,
  asks: PodTemplateAsks,
): string | undefined {
  if (!restrictions || !restrictsAnything(restrictions)) return undefined;
  if (asks.templatesUnknown) return 'refuses workloads whose pod templates jobrelay cannot read';
  if (restrictions.refusePrivileged && asks.privileged.length > 0)
    return `refuses privileged pods (${asks.privileged.join(', ')})`;
  if (restrictions.refuseHostPath && asks.hostPathVolumes.length > 0)
    return `refuses hostPath volumes (${asks.hostPathVolumes.join(', ')})`;
  if (restrictions.refuseHostNamespaces && asks.hostNamespaces.length > 0)
    return `refuses host namespaces (${asks.hostNamespaces.join(', ')})`;
  if (restrictions.refuseNodeName && asks.nodeNames.length > 0)
    return `refuses pods bound to a node by name (${asks.nodeNames.join(', ')})`;
  const allowed = restrictions.allowedServiceAccounts;
  if (allowed) {
    const refused = asks.serviceAccounts.filter((a) => !('name' in a) || !allowed.includes(a.name));
    if (refused.length > 0) return `does not allow ${refused.map(serviceAccountText).join(', ')}`;
  }
  return undefined;
}
