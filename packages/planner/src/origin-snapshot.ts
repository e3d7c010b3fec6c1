import type { KubeObject } from '@jobrelay/kinds';
import type { ParsedPlacement } from '@jobrelay/placement';

/** One worker cluster as one origin's reconcile sees it. */
export interface ClusterSnapshot<T extends KubeObject = KubeObject> {
  name: string;
  /** A WorkerCluster of that name exists. */
  registered: boolean;
  /** The registry holds clients and a synced mirror cache for it. */
  connected: boolean;
  /** Its Active condition is True. */
  active: boolean;
  /** Why it is (not) Active: the Active condition's reason. */
  reason: string;
  /** When it stopped being Active (clock milliseconds); undefined while Active or never connected. */
  inactiveSince: number | undefined;
  /** Its spec asks for a drain: its unfinished workloads move elsewhere. */
  drain: boolean;
  /**
   * Its spec.podRestrictions as stored (read with readPodRestrictions only when a spec change
   * is to go down): a change that makes the mirror ask for more of what it refuses is held back.
   */
  podRestrictions?: unknown;
  /** The object of the origin's namespace/name in its mirror cache, whoever owns it. */
  mirror: T | undefined;
  /**
   * Why this cluster would not take the origin now by its fences (cordon, drain, allowed
   * namespaces, selector, pin, limits, what it accepts; not its capacity). Checked again just
   * before a mirror is created, whatever the placement record says; filled in for the cluster
   * the record names while its mirror is missing, undefined when it would take it.
   */
  fenced?: string;
  /**
   * What the worker's own admission says of the mirror it holds suspended, in its own words
   * and naming itself (`Kueue: couldn't assign flavors to pod set main: ...`), read from the
   * worker while the mirror is held; undefined when not read (yet), or when the worker has no
   * such admission jobrelay may read. It then says why in place of the mirror's own reason.
   */
  workerAdmission?: string;
}

/** Everything one reconcile of one origin decides from, read from caches at one instant. */
export type OriginSnapshot<T extends KubeObject = KubeObject> =
  | {
      kind: 'present';
      key: string;
      origin: T;
      placement: ParsedPlacement;
      clusters: ClusterSnapshot<T>[];
    }
  | {
      /** Deleted, or being deleted (deletionTimestamp set). */
      kind: 'gone';
      key: string;
      /** Its UID while known (from the object or the informer's delete event). */
      uid: string | undefined;
      clusters: ClusterSnapshot<T>[];
    };
