// INTERIM, until the queue-resource branch's queueFor, workloadPriority and priorityClassLookup
// land in @jobrelay/admission: the same contract (queue-model.ts), so the controller's wiring
// runs and is tested meanwhile. Replaced by those, not kept beside them.
import type {
  PriorityClassLookup,
  QueueChoice,
  QueueSelectionInput,
  QueueSpec,
  WorkloadPriority,
} from '@jobrelay/admission';
import { queueNameLabel } from '@jobrelay/admission';
import { labelsMatch, type WorkloadPodTemplate } from '@jobrelay/placement';

export function queueFor(
  workload: QueueSelectionInput,
  namespaceLabels: Record<string, string> | undefined,
  queues: readonly QueueSpec[],
): QueueChoice {
  const selecting = queues.filter(
    (q) => q.namespaceSelector !== undefined && labelsMatch(q.namespaceSelector, namespaceLabels ?? {}),
  );
  const named = workload.labels?.[queueNameLabel];
  if (named !== undefined) {
    if (selecting.some((q) => q.name === named)) return { kind: 'queued', queue: named };
    const exists = queues.some((q) => q.name === named);
    return {
      kind: 'refused',
      message: exists
        ? `queue ${named} does not take workloads of namespace ${workload.namespace}`
        : `queue ${named} does not exist`,
    };
  }
  if (selecting.length === 0) return { kind: 'unqueued' };
  if (selecting.length === 1) return { kind: 'queued', queue: selecting[0]!.name };
  return {
    kind: 'refused',
    message: `queues ${selecting.map((q) => q.name).join(', ')} all take namespace ${workload.namespace}: name one with the label ${queueNameLabel}`,
  };
}

export function workloadPriority(
  templates: readonly WorkloadPodTemplate[] | undefined,
  classes: PriorityClassLookup,
): WorkloadPriority {
  let best: { priority: number; className: string } | undefined;
  for (const template of templates ?? []) {
    const name = template.spec.priorityClassName;
    if (!name) continue;
    const found = classes.get(name);
    if (!found) return { kind: 'refused', message: `PriorityClass ${name} does not exist` };
    if (!best || found.value > best.priority) best = { priority: found.value, className: name };
  }
  if (best) return { kind: 'ok', ...best };
  const fallback = classes.globalDefault();
  return fallback
    ? { kind: 'ok', priority: fallback.value, className: fallback.name }
    : { kind: 'ok', priority: 0 };
}

export function priorityClassLookup(
  objects: readonly { metadata?: { name?: string }; value?: number; globalDefault?: boolean }[],
): PriorityClassLookup {
  return {
    get: (name) => {
      const found = objects.find((o) => o.metadata?.name === name);
      return found && typeof found.value === 'number' ? { value: found.value } : undefined;
    },
    globalDefault: () => {
      let best: { name: string; value: number } | undefined;
      for (const o of objects) {
        if (o.globalDefault !== true || typeof o.value !== 'number' || !o.metadata?.name) continue;
        if (!best || o.value > best.value) best = { name: o.metadata.name, value: o.value };
      }
      return best;
    },
  };
}
