import {
  type ClusterApiClients,
  describeApiError,
  makeClusterApiClients,
  statusCodeOf,
  withTimeout,
} from '@jobrelay/kube';
import { originLabel } from '@jobrelay/mirror';
import type { V1SelfSubjectAccessReview } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { classifyConnectionError } from './classify-connection-error.ts';
import { loadWorkerKubeconfig } from './load-worker-kubeconfig.ts';
import { type ActiveReason, activeReasons } from './worker-cluster.ts';
import {
  deniedPermissions,
  summarizePermissions,
  type WorkerPermission,
  workerPermissions,
} from './worker-permissions.ts';

/** A health check that takes longer than this marks the cluster Unreachable. */
export const defaultProbeTimeoutMs = 5_000;

/** The label selector of this installation's mirrors: every watch and list on a worker uses it. */
export function mirrorSelectorFor(originId: string): string {
  return `${originLabel}=${originId}`;
}

/** What the worker checks learned, and the first failure, if any. */
export interface WorkerCheck {
  kubernetesVersion?: string;
  /** UID of the worker's kube-system namespace: two registrations of one cluster share it. */
  clusterUid?: string;
  /** The identity was found to hold every required permission (or the worker cannot say). */
  permissionsChecked: boolean;
  failure?: { reason: ActiveReason; message: string };
}

export interface WorkerCheckOptions {
  /** The origin's mirror selector (mirrorSelectorFor). */
  mirrorSelector: string;
  timeoutMs?: number;
  /** Already read on this connection: not asked again (every call costs the worker). */
  known?: { kubernetesVersion: string; clusterUid?: string };
  /** Already found complete on this connection: not asked again. */
  permissionsChecked?: boolean;
  log?: Logger;
}

/**
 * The checks of a worker connection, in order; the registry's health probe and
 * probeWorkerKubeconfig (registration) both run exactly these, so they cannot disagree:
 * 1. list our mirrors (label-selected, limit 1): proves the address, TLS, the credentials
 *    and the permission needed most;
 * 2. the version, and kube-system's UID (not fatal without it: duplicates then go undetected);
 * 3. SelfSubjectAccessReviews for every required worker permission: a missing one is
 *    Forbidden, named, rather than a capacity watch failing in the background forever.
 * A 403 on step 1 also runs step 3, so the message names every missing permission.
 * Failures are classified by classifyConnectionError: messages name the server, never a credential.
 */
export async function checkWorker(
  clients: ClusterApiClients,
  server: string,
  options: WorkerCheckOptions,
): Promise<WorkerCheck> {
  const timeoutMs = options.timeoutMs ?? defaultProbeTimeoutMs;
  const result: WorkerCheck = {
    ...options.known,
    permissionsChecked: options.permissionsChecked ?? false,
  };
  try {
    try {
      await withTimeout(
        clients.batch.listJobForAllNamespaces({ labelSelector: options.mirrorSelector, limit: 1 }),
        timeoutMs,
        server,
      );
    } catch (err) {
      if (statusCodeOf(err) !== 403) throw err;
      const denied = await deniedRequiredPermissions(clients, server, timeoutMs, options.log).catch(() => []);
      if (denied.length === 0) throw err;
      return {
        ...result,
        failure: {
          reason: activeReasons.forbidden,
          message: forbiddenMessage(`${server} denied listing Jobs (HTTP 403); it denies`, denied),
        },
      };
    }
    if (!options.known) {
      const version = await withTimeout(clients.version.getCode(), timeoutMs, server);
      result.kubernetesVersion = version.gitVersion;
      const kubeSystem = await withTimeout(
        clients.core.readNamespace({ name: 'kube-system' }),
        timeoutMs,
        server,
      ).catch(
        () => undefined, // without permission to read it, duplicates cannot be detected: not fatal
      );
      result.clusterUid = kubeSystem?.metadata?.uid;
    }
    if (!result.permissionsChecked) {
      const denied = await deniedRequiredPermissions(clients, server, timeoutMs, options.log);
      if (denied.length > 0) {
        return {
          ...result,
          failure: { reason: activeReasons.forbidden, message: forbiddenMessage(`${server} denies`, denied) },
        };
      }
      result.permissionsChecked = true;
    }
  } catch (err) {
    return { ...result, failure: classifyConnectionError(err, server) };
  }
  return result;
}

function forbiddenMessage(lead: string, denied: readonly WorkerPermission[]): string {
  return `${lead} the kubeconfig's identity ${summarizePermissions(denied)}: grant it the jobrelay-worker ClusterRole (kubectl apply -k deploy/worker)`;
}

/** Required permissions the worker denies; none when it cannot answer access reviews. */
async function deniedRequiredPermissions(
  clients: ClusterApiClients,
  server: string,
  timeoutMs: number,
  log: Logger | undefined,
): Promise<WorkerPermission[]> {
  // Through the worker's rate-limited clients and their one connection pool.
  const authorization = {
    createSelfSubjectAccessReview: ({ body }: { body: V1SelfSubjectAccessReview }) =>
      clients.custom.createClusterCustomObject({
        group: 'authorization.k8s.io',
        version: 'v1',
        plural: 'selfsubjectaccessreviews',
        body,
      }) as Promise<V1SelfSubjectAccessReview>,
  };
  const required = workerPermissions.filter((p) => p.required);
  try {
    return await withTimeout(deniedPermissions(authorization, required), timeoutMs, server);
  } catch (err) {
    const status = statusCodeOf(err);
    // An apiserver without the authorization API, or one that forbids self-reviews: the
    // check is skipped (the watches log their own errors). Anything else (a timeout, a 401) is
    // a connection error.
    if (status !== 403 && status !== 404) throw err;
    log?.warn({ err: describeApiError(err) }, "cannot review the identity's permissions; not checked");
    return [];
  }
}

export type WorkerKubeconfigProbe =
  | { ok: true; server: string; kubernetesVersion: string; clusterUid?: string }
  | { ok: false; reason: ActiveReason; message: string };

export interface WorkerKubeconfigProbeOptions {
  /** This installation's `jobrelay.dev/origin` value: the mirror list selects on it. */
  originId: string;
  /** Accept exec credential plugins (off by default, as in the controller). */
  allowExecPlugins?: boolean;
  /** Per check (each API call); default 5 s, as the registry's health probe. */
  timeoutMs?: number;
  /** The clock, for client certificate validity. */
  now?: Date;
}

/**
 * Vets and probes a worker kubeconfig before anything is saved (registration, a preview):
 * the same loadWorkerKubeconfig vetting and the same checks as the registry's health probe,
 * so a kubeconfig that passes here becomes Active there unless the cluster changes (or is
 * already registered: duplicates are the registry's to judge, with the returned clusterUid).
 * Writes nothing anywhere; messages never contain a credential.
 */
export async function probeWorkerKubeconfig(
  kubeconfigText: string,
  options: WorkerKubeconfigProbeOptions,
): Promise<WorkerKubeconfigProbe> {
  const loaded = loadWorkerKubeconfig(kubeconfigText, {
    allowExecPlugins: options.allowExecPlugins ?? false,
    ...(options.now ? { now: options.now } : {}),
  });
  if (!loaded.ok) return { ok: false, reason: loaded.reason, message: loaded.message };
  const timeoutMs = options.timeoutMs ?? defaultProbeTimeoutMs;
  const clients = makeClusterApiClients(loaded.kubeConfig, {
    qps: 50,
    burst: 100,
    // Abandoned with the check, not left pending for the default 15 s.
    requestTimeoutMs: timeoutMs,
  });
  const check = await checkWorker(clients, loaded.server, {
    mirrorSelector: mirrorSelectorFor(options.originId),
    timeoutMs,
  });
  if (check.failure) return { ok: false, ...check.failure };
  return {
    ok: true,
    server: loaded.server,
    kubernetesVersion: check.kubernetesVersion ?? 'unknown',
    ...(check.clusterUid ? { clusterUid: check.clusterUid } : {}),
  };
}
