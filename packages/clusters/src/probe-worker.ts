import { discoverServedKinds, type WorkloadResource } from '@jobrelay/kinds';
import { type ClusterApiClients, makeClusterApiClients, statusCodeOf, withTimeout } from '@jobrelay/kube';
import { originLabel } from '@jobrelay/mirror';
import type { V1SelfSubjectAccessReview } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { classifyConnectionError } from './classify-connection-error.ts';
import { type KubeconfigPolicy, loadWorkerKubeconfig } from './load-worker-kubeconfig.ts';
import { type ActiveReason, activeReasons } from './worker-cluster.ts';
import {
  deniedPermissions,
  summarizePermissions,
  type WorkerKind,
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
  /**
   * The kinds (adapter names) the worker serves, of those asked about; undefined until
   * discovery answered. A kind not served is not watched, not checked and not placed there.
   */
  servedKinds?: ReadonlySet<string>;
  /** The identity was found to hold every required permission of the served kinds (or the worker cannot say). */
  permissionsChecked: boolean;
  failure?: { reason: ActiveReason; message: string };
}

export interface WorkerCheckOptions {
  /** The kinds jobrelay dispatches: which the worker serves is discovered, and those are checked. */
  kinds: readonly WorkerKind[];
  /** The origin's mirror selector (mirrorSelectorFor). */
  mirrorSelector: string;
  timeoutMs?: number;
  /** Already read on this connection: not asked again (every call costs the worker). */
  known?: { kubernetesVersion: string; clusterUid?: string };
  /**
   * Kinds already found served on this connection: discovery asks only about the others
   * (none, once every kind is served), so a kind installed later is found at the next check.
   */
  servedKinds?: ReadonlySet<string>;
  /** Already found complete on this connection for `servedKinds`: not asked again. */
  permissionsChecked?: boolean;
  /**
   * Kinds whose mirrors this connection watches right now (the apiserver accepted the watch
   * since the last failure): the watch proves the permission, so they are not listed. An idle
   * fleet then costs its workers no LIST (issue 31); a permission taken away fails the next
   * watch (within its 25 s timeout), and the check after that lists and says which.
   */
  watchedKinds?: ReadonlySet<string>;
  log?: Logger;
}

/**
 * The checks of a worker connection, in order; the registry's health probe and
 * probeWorkerKubeconfig (registration) both run exactly these, so they cannot disagree:
 * 1. discovery (`GET /apis/<group>/<version>` of each kind not yet known to be served):
 *    proves the address, TLS and the credentials, and says which kinds the worker serves;
 * 2. list our mirrors of each served kind not watched right now (label-selected, limit 1): the
 *    permission needed most (a kind whose resource went away meanwhile is no longer served);
 * 3. the version, and kube-system's UID (not fatal without it: duplicates then go undetected);
 * 4. SelfSubjectAccessReviews for every required worker permission of the served kinds: a
 *    missing one is Forbidden, named, rather than a watch failing in the background forever.
 * A 403 on step 2 also runs step 4, so the message names every missing permission.
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
    ...(options.servedKinds ? { servedKinds: options.servedKinds } : {}),
  };
  try {
    let served = await discoverServedKinds(clients.custom, options.kinds, {
      ...(options.servedKinds ? { known: options.servedKinds } : {}),
      call: (request) => withTimeout(request, timeoutMs, server),
    });
    // A kind found since the last check has had its permissions reviewed by nobody.
    if ([...served].some((kind) => !options.servedKinds?.has(kind))) result.permissionsChecked = false;
    result.servedKinds = served;
    const toList = options.kinds.filter(
      (kind) => served.has(kind.name) && !options.watchedKinds?.has(kind.name),
    );
    const listed = await Promise.allSettled(
      toList.map(async (kind) => {
        const { group, version, plural } = kind.resource;
        try {
          await withTimeout(
            clients.custom.listClusterCustomObject({
              group,
              version,
              plural,
              labelSelector: options.mirrorSelector,
              limit: 1,
            }),
            timeoutMs,
            server,
          );
          return undefined;
        } catch (err) {
          if (statusCodeOf(err) === 404) return kind.name; // its resource went away
          throw new KindListError(kind, err);
        }
      }),
    );
    const gone = listed.flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : []));
    if (gone.length > 0) {
      served = new Set([...served].filter((kind) => !gone.includes(kind)));
      result.servedKinds = served;
    }
    const failed = listed.flatMap((r) => (r.status === 'rejected' ? [r.reason as KindListError] : []));
    const other = failed.find((f) => statusCodeOf(f.cause) !== 403);
    if (other) throw other.cause;
    if (failed.length > 0) {
      const required = requiredPermissions(options.kinds, served);
      const denied = await deniedRequiredPermissions(clients, server, required, timeoutMs, options.log).catch(
        () => [],
      );
      if (denied.length === 0) throw failed[0]!.cause;
      const resources = failed.map((f) => resourceName(f.kind.resource)).join(', ');
      return {
        ...result,
        failure: {
          reason: activeReasons.forbidden,
          message: forbiddenMessage(`${server} denied listing ${resources} (HTTP 403); it denies`, denied),
        },
      };
    }
    const discovered = options.kinds.some((kind) => !options.servedKinds?.has(kind.name));
    if (toList.length === 0 && !discovered && options.known) {
      // Nothing discovered or listed reached the worker: the version is the health check.
      await withTimeout(clients.version.getCode(), timeoutMs, server);
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
      const required = requiredPermissions(options.kinds, served);
      const denied = await deniedRequiredPermissions(clients, server, required, timeoutMs, options.log);
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

/** A failed mirror list, with the kind it was for. */
class KindListError extends Error {
  readonly kind: WorkerKind;
  constructor(kind: WorkerKind, cause: unknown) {
    super(`listing ${resourceName(kind.resource)} failed`, { cause });
    this.kind = kind;
  }
}

/** `<plural>.<group>`, as kubectl names a resource. */
function resourceName(resource: WorkloadResource): string {
  return resource.group ? `${resource.plural}.${resource.group}` : resource.plural;
}

/** The permissions the controller cannot work without on a worker serving `served` of `kinds`. */
function requiredPermissions(kinds: readonly WorkerKind[], served: ReadonlySet<string>): WorkerPermission[] {
  return workerPermissions(kinds.filter((kind) => served.has(kind.name))).filter((p) => p.required);
}

function forbiddenMessage(lead: string, denied: readonly WorkerPermission[]): string {
  return `${lead} the kubeconfig's identity ${summarizePermissions(denied)}: grant it the jobrelay-worker ClusterRole (kubectl apply -k deploy/worker)`;
}

/** Which of `required` the worker denies; none when it cannot answer access reviews. */
async function deniedRequiredPermissions(
  clients: ClusterApiClients,
  server: string,
  required: readonly WorkerPermission[],
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
  try {
    return await withTimeout(deniedPermissions(authorization, required), timeoutMs, server);
  } catch (err) {
    const status = statusCodeOf(err);
    // An apiserver without the authorization API, or one that forbids self-reviews: the
    // check is skipped (the watches log their own errors). Anything else (a timeout, a 401) is
    // a connection error.
    if (status !== 403 && status !== 404) throw err;
    log?.warn({ err }, "cannot review the identity's permissions; not checked");
    return [];
  }
}

export type WorkerKubeconfigProbe =
  | {
      ok: true;
      server: string;
      kubernetesVersion: string;
      clusterUid?: string;
      /** The kinds (adapter names) of `kinds` the worker serves. */
      servedKinds: string[];
    }
  | { ok: false; reason: ActiveReason; message: string };

export interface WorkerKubeconfigProbeOptions {
  /** The kinds jobrelay dispatches (the registry's): which the worker serves, and their permissions. */
  kinds: readonly WorkerKind[];
  /** This installation's `jobrelay.dev/origin` value: the mirror list selects on it. */
  originId: string;
  /** What the kubeconfig may hold beyond the allow-list: the controller's policy, so both vet alike. */
  kubeconfigPolicy?: KubeconfigPolicy;
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
    ...options.kubeconfigPolicy,
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
    kinds: options.kinds,
    mirrorSelector: mirrorSelectorFor(options.originId),
    timeoutMs,
  });
  if (check.failure) return { ok: false, ...check.failure };
  return {
    ok: true,
    server: loaded.server,
    kubernetesVersion: check.kubernetesVersion ?? 'unknown',
    ...(check.clusterUid ? { clusterUid: check.clusterUid } : {}),
    servedKinds: [...(check.servedKinds ?? [])],
  };
}
