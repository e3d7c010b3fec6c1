// The management cluster's caches the controller watches, each emitting on the controller's
// event hub and nothing else: the claimed origins of every kind, the namespaces, the
// DispatchQueues and the PriorityClasses. Which part reacts to what is each part's own
// declaration (ControllerPart.watches), not the informers'.
import { CachedPriorityClasses } from '@jobrelay/admission';
import { type Namespace, namespaceInformer } from '@jobrelay/clusters';
import { claimedOriginInformer, type KindChoice, type KubeObject } from '@jobrelay/kinds';
import { type ClusterApiClients, ResilientInformer, TimeoutError, withTimeout } from '@jobrelay/kube';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { ControllerConfig } from './controller-config.ts';
import type { ControllerEvents } from './controller-events.ts';
import type { AnyDispatchedKind } from './dispatched-kinds.ts';

export interface ManagementInformers {
  /** The dispatched kinds by adapter name, each with its cache of the origins it claims. */
  kinds: Map<string, AnyDispatchedKind>;
  /** The management cluster's namespaces (their labels): Pod Security levels, and the queues they select. */
  namespaces: ResilientInformer<Namespace>;
  /** DispatchQueues (cluster-scoped custom objects), raw: admission parses each. */
  dispatchQueues: ResilientInformer<KubeObject>;
  /** PriorityClasses: a workload's priority in its queue. */
  priorityClasses: ResilientInformer<KubeObject>;
  priorityLookup: CachedPriorityClasses;
  /** Every informer, in the order they start (origins first: see DispatchController.start). */
  all(): ResilientInformer<KubeObject>[];
  /**
   * DispatchQueues and PriorityClasses listed before anything is placed, so a queued workload is
   * never placed as unqueued. Where the DispatchQueue CRD is not installed the list keeps failing
   * (the informer retries): after a bounded wait the controller goes on without queues, and
   * admission starts whenever queues appear.
   */
  waitForQueueRules(log: Logger): Promise<void>;
}

export function managementInformers(options: {
  management: KubeConfig;
  managementApis: ClusterApiClients;
  config: Pick<ControllerConfig, 'namespaces'>;
  kinds: readonly KindChoice[];
  events: ControllerEvents;
  log: Logger;
}): ManagementInformers {
  const { management, config, events, log } = options;
  const kinds = new Map<string, AnyDispatchedKind>();
  for (const { adapter, managedBy } of options.kinds) {
    const origins = claimedOriginInformer({
      adapter,
      managedBy,
      kubeConfig: management,
      namespaces: config.namespaces,
      log,
      onEvent: (event) => events.emit('origin', kinds.get(adapter.name)!, event),
    });
    kinds.set(adapter.name, {
      adapter,
      managedBy,
      origins,
      management: adapter.client(options.managementApis),
    });
  }
  const namespaces = namespaceInformer({
    name: 'management namespaces',
    kubeConfig: management,
    log,
    onEvent: (event) => {
      const name = event.object.metadata?.name;
      if (name) events.emit('managementNamespace', name);
    },
  });
  const dispatchQueues = new ResilientInformer<KubeObject>({
    name: 'dispatch queues',
    kubeConfig: management,
    apiVersion: 'jobrelay.dev/v1alpha1',
    kind: 'DispatchQueue',
    path: '/apis/jobrelay.dev/v1alpha1/dispatchqueues',
    log,
    // Its own status writes (every few seconds while admitting) change nothing admission reads.
    onEvent: (event) => {
      if (
        event.type === 'upsert' &&
        event.previous?.metadata?.generation === event.object.metadata?.generation
      )
        return;
      events.emit('queueRules');
    },
  });
  const priorityClasses: ResilientInformer<KubeObject> = new ResilientInformer<KubeObject>({
    name: 'priority classes',
    kubeConfig: management,
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    path: '/apis/scheduling.k8s.io/v1/priorityclasses',
    log,
    onEvent: () => {
      // The lookup is this informer's own derived cache: dropped before anyone reads it again.
      priorityLookup.changed();
      events.emit('queueRules');
    },
  });
  const priorityLookup = new CachedPriorityClasses(() => priorityClasses.list());
  return {
    kinds,
    namespaces,
    dispatchQueues,
    priorityClasses,
    priorityLookup,
    waitForQueueRules: async (waitLog) => {
      const waitMs = 15_000;
      for (const informer of [dispatchQueues, priorityClasses]) {
        await withTimeout(informer.waitForSync(), waitMs, 'queue caches').catch((err: unknown) => {
          if (!(err instanceof TimeoutError)) throw err;
          waitLog.warn(
            { waitMs },
            'DispatchQueues or PriorityClasses could not be listed (is the DispatchQueue CRD installed?); going on without queue admission until they are',
          );
        });
      }
    },
    all: () => [
      ...[...kinds.values()].map((kind) => kind.origins),
      namespaces as ResilientInformer<KubeObject>,
      dispatchQueues,
      priorityClasses,
    ],
  };
}
