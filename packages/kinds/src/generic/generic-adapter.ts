// Any custom workload kind with a spec.managedBy field, configured by GVK (GenericKindConfig)
// rather than coded: its mirror is the origin minus managedBy, its status comes back
// verbatim, it is finished when a configured condition or field says so. Nothing here knows
// the kind's schema, so its support is labelled 'generic-untested' (its own controller was not
// run against jobrelay here), unless it is exactly a configuration the e2e suite runs against
// its kind's real controller (verifiedGenericKinds: JobSet).
import type { PodTemplateSpec } from '@jobrelay/kube';
import {
  deepCopy,
  heldByWorker,
  mirrorIdentityMetadata,
  suspendRecordUpdate,
  suspendSent,
  suspendSentAnnotation,
} from '@jobrelay/mirror';
import type { PodGroup, WorkloadPodTemplate } from '@jobrelay/placement';
import { podRequests } from '@jobrelay/resources';
import { customObjectClient } from '../custom-object-client.ts';
import type { KubeObject, WorkloadKindAdapter, WorkloadResource } from '../workload-kind-adapter.ts';
import { apiVersionOf } from '../workload-kind-adapter.ts';
import { type GenericKindConfig, genericKindConfigSchema } from './generic-kind-config.ts';
import { verifiedGenericKinds } from './generic-kind-examples.ts';
import {
  absentWhenNullOrEmpty,
  agrees,
  equalIgnoringAbsent,
  isPlainObject,
  jsonEqual,
  mergeObjects,
  objectAt,
  valueAt,
} from './json-values.ts';
import { originObservedGeneration, withObservedGeneration } from './observed-generation.ts';

/** metav1.Condition as most kinds write it (knative-style conditions have the same fields that matter here). */
export interface GenericCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

/** An object of a generically dispatched kind: only managedBy, conditions and observedGeneration are known. */
export interface GenericWorkload extends KubeObject {
  spec?: { managedBy?: string; [field: string]: unknown };
  status?: { conditions?: GenericCondition[]; observedGeneration?: number; [field: string]: unknown };
}

/** Spec fields (relative to spec) that flow down: configured, else the suspend field alone. */
function flowingFields(config: GenericKindConfig): string[] {
  if (config.mutableSpecFields) return config.mutableSpecFields;
  return config.suspendField ? [config.suspendField.slice('spec.'.length)] : [];
}

function finishedCondition(config: GenericKindConfig, object: GenericWorkload): GenericCondition | undefined {
  const conditions = object.status?.conditions;
  if (!Array.isArray(conditions)) return undefined;
  return conditions.find((c) =>
    config.finishedConditions.some((rule) => rule.type === c.type && rule.status === c.status),
  );
}

function count(root: unknown, factors: GenericKindConfig['podSets'][number]['count']): number {
  let pods = 1;
  for (const factor of factors) {
    const value = valueAt(root, factor.path);
    pods *= typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : factor.default;
  }
  return pods;
}

/** Whether `config` is, field for field, one the e2e suite runs against its kind's real controller. */
function isVerifiedConfiguration(config: GenericKindConfig): boolean {
  return verifiedGenericKinds.some((verified) => jsonEqual(genericKindConfigSchema.parse(verified), config));
}

/** The adapter for one configured kind. */
export function genericAdapter(config: GenericKindConfig) {
  const resource: WorkloadResource = {
    group: config.group,
    version: config.version,
    kind: config.kind,
    plural: config.plural,
  };
  const fields = flowingFields(config);
  const suspendPath = config.suspendField?.slice('spec.'.length);

  const originSuspended = (origin: GenericWorkload) =>
    suspendPath !== undefined && valueAt(origin.spec, suspendPath) === true;

  /**
   * A merge patch of the flowing fields that differ. The suspend field is compared as a
   * boolean (absent is false) and goes down as the origin's transitions only, never a standing
   * value over a worker's own admission (a Kueue there holding the mirror suspended); a mirror
   * without the record of what was sent is brought to the origin's value once. Another field
   * the origin leaves out has no opinion; an array that differs is sent whole.
   */
  const mirrorSpecUpdate = (
    origin: GenericWorkload,
    mirror: GenericWorkload,
  ): Record<string, unknown> | undefined => {
    if (!origin.spec || !mirror.spec) return undefined;
    let patch: Record<string, unknown> | undefined;
    for (const path of fields) {
      let want = valueAt(origin.spec, path);
      let have = valueAt(mirror.spec, path);
      if (path === suspendPath) {
        want = want === true;
        have = suspendSent(mirror) ?? have === true;
      }
      if (agrees(have, want)) continue;
      patch = mergeObjects(patch ?? {}, objectAt(path, deepCopy(want)));
    }
    return patch;
  };

  return {
    name: config.name,
    resource,
    managedBy: config.managedBy,
    verification: isVerifiedConfiguration(config) ? 'real-controller' : 'generic-untested',

    isManagedBy: (object, managedBy) => object.spec?.managedBy === managedBy,
    client: (apis) => customObjectClient<GenericWorkload>(resource, apis),

    buildMirror: (origin, context) => {
      if (!origin.spec)
        throw new Error(`${config.kind} ${origin.metadata?.namespace}/${origin.metadata?.name} has no spec`);
      const { managedBy: _claimed, ...spec } = deepCopy(origin.spec);
      const metadata = mirrorIdentityMetadata(origin.metadata ?? {}, context);
      return {
        apiVersion: apiVersionOf(resource),
        kind: config.kind,
        metadata: suspendPath
          ? {
              ...metadata,
              // What jobrelay sent: later only the origin's suspend transitions go down.
              annotations: {
                ...metadata.annotations,
                [suspendSentAnnotation]: String(originSuspended(origin)),
              },
            }
          : metadata,
        spec,
      };
    },
    mirrorSpecUpdate,
    mirrorRecordUpdate: (origin: GenericWorkload, mirror: GenericWorkload) => {
      if (suspendPath === undefined) return undefined;
      return suspendRecordUpdate(originSuspended(origin), mirror);
    },
    /** Suspended on its worker though jobrelay last told it to run: the worker's own admission holds it. */
    mirrorHeldByWorker: (origin: GenericWorkload, mirror: GenericWorkload) =>
      suspendPath !== undefined &&
      heldByWorker(originSuspended(origin), mirror, valueAt(mirror.spec, suspendPath) === true)
        ? `its ${config.kind} is suspended there`
        : undefined,
    /**
     * The mirror's status verbatim, except a top-level observedGeneration, which counts the
     * mirror's generations: the origin reports its own (originObservedGeneration). Nothing is
     * carried across attempts (the kind's counters, if any, are unknown here).
     */
    originStatus: (origin, mirror, _carried, _now) => {
      const status = deepCopy(mirror.status ?? {});
      const specInLine = mirrorSpecUpdate(origin, mirror) === undefined;
      return withObservedGeneration(status, originObservedGeneration(origin, mirror, specInLine));
    },
    sameStatus: (a, b) => equalIgnoringAbsent(a ?? {}, b ?? {}, absentWhenNullOrEmpty),
    // The kind's schema is unknown here: its apiserver's validation is the only check.
    statusViolations: (_object, _desired) => [],
    statusOf: (object) => object.status,

    isFinished: (object) =>
      finishedCondition(config, object) !== undefined ||
      config.finishedFields.some((rule) => {
        const value = valueAt(object, rule.path);
        return typeof value === 'string' && rule.values.includes(value);
      }),
    /** The finishing condition's lastTransitionTime; a finished field carries no time. */
    finishedAt: (object) => {
      const at = finishedCondition(config, object)?.lastTransitionTime;
      return at ? new Date(at) : undefined;
    },
    isSuspended: (object) => (config.suspendField ? valueAt(object, config.suspendField) === true : false),
    podDemand: (object) => {
      const groups: PodGroup[] = [];
      for (const podSet of config.podSets) {
        const elements = podSet.each ? valueAt(object, podSet.each) : object;
        for (const element of podSet.each ? (Array.isArray(elements) ? elements : []) : [elements]) {
          const template = valueAt(element, podSet.template);
          if (!isPlainObject(template) || !isPlainObject(template.spec)) continue;
          const pods = count(element, podSet.count);
          if (pods > 0)
            groups.push({ requests: podRequests((template as PodTemplateSpec).spec!), count: pods });
        }
      }
      return groups;
    },
    /**
     * The templates at the configured pod sets, whatever their counts (a set scaled to zero may
     * grow). Each is named by where it is (`spec.replicatedJobs[1]`), unless the kind has one.
     * Undefined without pod sets: where the pods come from is not known.
     */
    podTemplates: (object) => {
      if (config.podSets.length === 0) return undefined;
      const single = config.podSets.length === 1 && !config.podSets[0]!.each;
      const templates: WorkloadPodTemplate[] = [];
      for (const podSet of config.podSets) {
        const elements = podSet.each ? valueAt(object, podSet.each) : object;
        const list = podSet.each ? (Array.isArray(elements) ? elements : []) : [elements];
        for (const [index, element] of list.entries()) {
          const template = valueAt(element, podSet.template);
          if (!isPlainObject(template) || !isPlainObject(template.spec)) continue;
          const role = single ? '' : podSet.each ? `${podSet.each}[${index}]` : podSet.template;
          templates.push({ role, spec: (template as PodTemplateSpec).spec! });
        }
      }
      return templates;
    },
    /** The pods carrying the configured label with the mirror's name; none without one. */
    podsOf: (mirror) => {
      const name = mirror.metadata?.name;
      if (!config.podLabel || !name) return [];
      return [{ labelSelector: `${config.podLabel}=${name}`, description: `${config.kind} ${name}'s pods` }];
    },
  } satisfies WorkloadKindAdapter<GenericWorkload>;
}
