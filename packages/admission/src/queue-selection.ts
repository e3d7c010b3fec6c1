// Which DispatchQueue takes a workload. Many teams who do not trust each other share the fleet,
// and a workload's labels are written by its author: so the namespace decides which queues a
// workload may use (each queue's namespaceSelector, written by an admin), and the label
// jobrelay.dev/queue-name only picks among those. Nothing an author writes reaches a queue
// whose selector does not select the workload's namespace.

import { labelsMatch } from '@jobrelay/resources';
import {
  type ParsedQueue,
  type QueueChoice,
  type QueueSelectionInput,
  type QueueSpec,
  queueNameLabel,
} from './queue-model.ts';

/** A queue whose spec cannot be used (parseDispatchQueue's refusal). */
export type InvalidQueue = Extract<ParsedQueue, { kind: 'invalid' }>;

function sortedNames(names: Iterable<string>): string[] {
  return [...new Set(names)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function list(names: readonly string[]): string {
  return names.join(', ');
}

/**
 * The queue of `workload`, given its namespace's labels:
 * - it names a queue (label jobrelay.dev/queue-name): that queue, if its namespaceSelector
 *   selects the namespace; otherwise refused, saying which queues the namespace may use. The
 *   refusal is the same whether the named queue exists or not, so a workload cannot probe
 *   which queues other teams have;
 * - it names none: the one queue that selects its namespace; refused, naming them, when
 *   several do (its author sets the label to choose); unqueued when none does (placed as
 *   without queues: an install without queues behaves as before).
 * A queue without a namespaceSelector selects no namespace, so it takes no workload.
 *
 * `namespaceLabels` are the namespace's labels as the caller's cache holds them. A caller that
 * does not know the namespace yet (its cache not synced) must wait rather than pass undefined:
 * undefined reads as a namespace without labels, which the queues fencing it may not select.
 *
 * `queues` are the usable ones (parseDispatchQueue's `ok` specs). An invalid queue must not
 * open its fence: were it simply left out, its namespaces' workloads would run unqueued, past
 * the quota an admin meant to set, because of a typo. So the caller passes the invalid ones as
 * `invalidQueues`: one that selects the namespace (by the selector parsed from it, when that part
 * of its spec is readable) holds the workloads that would be its own until it is fixed. One
 * whose selector itself cannot be read fences nothing, as no one can tell what it selects; the
 * CRD's schema refuses most such selectors at the apiserver.
 */
export function queueFor(
  workload: QueueSelectionInput,
  namespaceLabels: Record<string, string> | undefined,
  queues: readonly QueueSpec[],
  invalidQueues: readonly InvalidQueue[] = [],
): QueueChoice {
  const { namespace } = workload;
  const selects = (selector: QueueSpec['namespaceSelector']) =>
    selector !== undefined && labelsMatch(selector, namespaceLabels);
  const usable = sortedNames(queues.filter((q) => selects(q.namespaceSelector)).map((q) => q.name));
  const broken = sortedNames(invalidQueues.filter((q) => selects(q.namespaceSelector)).map((q) => q.name));
  const mayUse = usable.length > 0 ? `it may use: ${list(usable)}` : `no queue takes namespace ${namespace}`;
  const brokenNote = (names: readonly string[]) =>
    names.length === 1
      ? `queue ${names[0]} has an invalid spec (its Active condition says why: kubectl get dispatchqueue ${names[0]} -o yaml); an admin must fix it`
      : `queues ${list(names)} have invalid specs (their Active conditions say why); an admin must fix them`;

  // Own property only: a label set is data, "constructor" is not a label it has.
  const labels = workload.labels ?? {};
  if (Object.hasOwn(labels, queueNameLabel)) {
    const named = labels[queueNameLabel]!;
    if (usable.includes(named)) return { kind: 'queued', queue: named };
    if (broken.includes(named))
      return { kind: 'refused', message: `label ${queueNameLabel}=${named}: ${brokenNote([named])}` };
    if (named === '')
      return {
        kind: 'refused',
        message: `label ${queueNameLabel} is empty: set it to a queue's name or remove it (${mayUse})`,
      };
    return {
      kind: 'refused',
      message: `label ${queueNameLabel}=${named}: namespace ${namespace} may not use a queue of that name (${mayUse})${
        broken.length > 0 ? `; ${brokenNote(broken)}` : ''
      }`,
    };
  }

  if (usable.length === 0 && broken.length === 0) return { kind: 'unqueued' };
  if (usable.length === 1 && broken.length === 0) return { kind: 'queued', queue: usable[0]! };
  if (usable.length === 0)
    return { kind: 'refused', message: `the queue of namespace ${namespace}: ${brokenNote(broken)}` };
  // Two or more queues would take it (a broken one counts: once fixed it would): the author
  // chooses, as the namespace's admins meant it to.
  const candidates = sortedNames([...usable, ...broken]);
  return {
    kind: 'refused',
    message: `${candidates.length} queues take namespace ${namespace} (${list(candidates)}): set the label ${queueNameLabel} to one of ${list(usable)}${
      broken.length > 0 ? `; ${brokenNote(broken)}` : ''
    }`,
  };
}
