// A DispatchQueue object (deploy/crds/dispatchqueues.jobrelay.dev.yaml) read into a QueueSpec.
// The CRD's schema refuses most mistakes at the apiserver already; this parse checks everything
// again because the controller must never act on a queue it misread (an object stored before a
// schema change, a CRD installed without its CEL rules, a selector key the schema cannot check),
// and reports every problem at once, with its field path, for the queue's Active condition.

import {
  formatResourceAmount,
  type LabelRequirement,
  type LabelSelector,
  labelKeyProblem,
  labelValueProblem,
  parseQuantity,
  type Resources,
  resourceAmount,
} from '@jobrelay/resources';
import {
  type DispatchQueueStatus,
  type ParsedQueue,
  type QueueingStrategy,
  type QueueSpec,
  type ReclaimPreemption,
  type WithinQueuePreemption,
  workloadCountResource,
} from './queue-model.ts';

export const queueingStrategies: readonly QueueingStrategy[] = ['StrictFIFO', 'BestEffortFIFO'];
export const withinQueuePreemptions: readonly WithinQueuePreemption[] = ['Never', 'LowerPriority'];
export const reclaimPreemptions: readonly ReclaimPreemption[] = ['Never', 'LowerPriority', 'Any'];

/** The defaults the CRD's schema fills in, filled in here too for objects that skipped them. */
export const dispatchQueueDefaults = {
  weight: 1,
  queueingStrategy: 'BestEffortFIFO',
  preemption: { withinQueue: 'Never', reclaimWithinCohort: 'Never' },
} as const satisfies Pick<QueueSpec, 'weight' | 'queueingStrategy' | 'preemption'>;

// A queue's name is a label value (jobrelay.dev/queue-name) and so is a cohort's in messages and
// columns: both are DNS labels, as the CRD requires.
const dnsLabelPattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
// What Kubernetes accepts as a resource name: a qualified name (cpu, nvidia.com/gpu).
const resourceNamePattern =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const selectorOperators = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

type Fields = Record<string, unknown>;

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeValue(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(JSON.stringify(value) ?? value);
}

function quoted(names: readonly string[]): string {
  return names.map((name) => JSON.stringify(name)).join(', ');
}

/**
 * A DispatchQueue as the apiserver returned it: its spec with every default filled in and every
 * quantity in the integer units of {@link Resources} (cpu in millicores, memory in bytes, a GPU
 * or `workloads` as a count), or every problem that keeps it from being used, each with its
 * field path (`spec.resources[1].lendingLimit: 50 is above nominalQuota 40 ...`).
 */
export function parseDispatchQueue(object: unknown): ParsedQueue {
  const problems: string[] = [];
  if (!isFields(object)) {
    return {
      kind: 'invalid',
      name: '',
      problems: [`a DispatchQueue is an object with metadata and spec, not ${describeValue(object)}`],
    };
  }
  const metadata = isFields(object.metadata) ? object.metadata : {};
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  if (name === '') problems.push('metadata.name: required');
  else if (name.length > 63 || !dnsLabelPattern.test(name))
    problems.push(
      `metadata.name: ${JSON.stringify(name)} is not a DNS label (at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit); workloads name their queue in a label value`,
    );

  if (!isFields(object.spec)) {
    problems.push(`spec: required, an object (found ${describeValue(object.spec)})`);
    return { kind: 'invalid', name, problems };
  }
  const spec = object.spec;

  const namespaceSelector =
    spec.namespaceSelector === undefined || spec.namespaceSelector === null
      ? undefined
      : parseNamespaceSelector(spec.namespaceSelector, 'spec.namespaceSelector', problems);

  let cohort: string | undefined;
  if (spec.cohort !== undefined && spec.cohort !== null) {
    if (typeof spec.cohort !== 'string' || spec.cohort.length > 63 || !dnsLabelPattern.test(spec.cohort))
      problems.push(
        `spec.cohort: ${describeValue(spec.cohort)} is not a DNS label (at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit)`,
      );
    else cohort = spec.cohort;
  }

  let weight: number = dispatchQueueDefaults.weight;
  if (spec.weight !== undefined && spec.weight !== null) {
    if (typeof spec.weight !== 'number' || !Number.isFinite(spec.weight) || spec.weight <= 0)
      problems.push(
        `spec.weight: ${describeValue(spec.weight)} must be a number above 0 (queues of a cohort share in proportion to it)`,
      );
    else weight = spec.weight;
  }

  const queueingStrategy = oneOf(
    spec.queueingStrategy,
    queueingStrategies,
    dispatchQueueDefaults.queueingStrategy,
    'spec.queueingStrategy',
    problems,
  );

  let preemptionFields: Fields = {};
  if (spec.preemption !== undefined && spec.preemption !== null) {
    if (isFields(spec.preemption)) preemptionFields = spec.preemption;
    else problems.push(`spec.preemption: must be an object (found ${describeValue(spec.preemption)})`);
  }
  const preemption = {
    withinQueue: oneOf(
      preemptionFields.withinQueue,
      withinQueuePreemptions,
      dispatchQueueDefaults.preemption.withinQueue,
      'spec.preemption.withinQueue',
      problems,
    ),
    reclaimWithinCohort: oneOf(
      preemptionFields.reclaimWithinCohort,
      reclaimPreemptions,
      dispatchQueueDefaults.preemption.reclaimWithinCohort,
      'spec.preemption.reclaimWithinCohort',
      problems,
    ),
  };

  const quota = parseResources(spec.resources, cohort, problems);

  if (problems.length > 0)
    return namespaceSelector
      ? { kind: 'invalid', name, problems, namespaceSelector }
      : { kind: 'invalid', name, problems };
  const parsed: QueueSpec = {
    name,
    nominalQuota: quota.nominal,
    weight,
    queueingStrategy,
    preemption,
  };
  if (namespaceSelector) parsed.namespaceSelector = namespaceSelector;
  if (cohort !== undefined) parsed.cohort = cohort;
  if (Object.keys(quota.borrowing).length > 0) parsed.borrowingLimit = quota.borrowing;
  if (Object.keys(quota.lending).length > 0) parsed.lendingLimit = quota.lending;
  return { kind: 'ok', spec: parsed };
}

function oneOf<T extends string>(
  value: unknown,
  allowed: readonly T[],
  fallback: T,
  path: string,
  problems: string[],
): T {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  problems.push(`${path}: ${describeValue(value)} is not one of ${quoted(allowed)}`);
  return fallback;
}

/**
 * A Kubernetes LabelSelector (matchLabels and matchExpressions, ANDed) as @jobrelay/resources'
 * requirements. Keys and values are checked as labels.Parse checks them (labelKeyProblem,
 * labelValueProblem), so a selector no namespace label could ever satisfy is named, not ignored.
 */
export function parseNamespaceSelector(
  value: unknown,
  path: string,
  problems: string[],
): LabelSelector | undefined {
  if (!isFields(value)) {
    problems.push(`${path}: must be a label selector object (matchLabels, matchExpressions)`);
    return undefined;
  }
  const before = problems.length;
  const requirements: LabelRequirement[] = [];
  for (const field of Object.keys(value))
    if (field !== 'matchLabels' && field !== 'matchExpressions')
      problems.push(`${path}.${field}: unknown field; a label selector has matchLabels and matchExpressions`);

  if (value.matchLabels !== undefined && value.matchLabels !== null) {
    if (!isFields(value.matchLabels))
      problems.push(`${path}.matchLabels: must be a map of label keys to values`);
    else
      for (const [key, labelValue] of Object.entries(value.matchLabels)) {
        const at = `${path}.matchLabels[${JSON.stringify(key)}]`;
        const keyProblem = labelKeyProblem(key);
        if (keyProblem) problems.push(`${at}: invalid label key: ${keyProblem}`);
        if (typeof labelValue !== 'string') problems.push(`${at}: the value must be a string`);
        else {
          const valueProblem = labelValueProblem(labelValue);
          if (valueProblem)
            problems.push(`${at}: invalid label value ${JSON.stringify(labelValue)}: ${valueProblem}`);
          requirements.push({ key, operator: 'Equals', values: [labelValue] });
        }
      }
  }

  if (value.matchExpressions !== undefined && value.matchExpressions !== null) {
    if (!Array.isArray(value.matchExpressions))
      problems.push(`${path}.matchExpressions: must be a list of {key, operator, values}`);
    else
      value.matchExpressions.forEach((expression: unknown, index) => {
        const at = `${path}.matchExpressions[${index}]`;
        if (!isFields(expression)) {
          problems.push(`${at}: must be an object with key, operator and values`);
          return;
        }
        const { key, operator, values } = expression;
        if (typeof key !== 'string') problems.push(`${at}.key: required, a label key`);
        else {
          const keyProblem = labelKeyProblem(key);
          if (keyProblem) problems.push(`${at}.key: invalid label key ${JSON.stringify(key)}: ${keyProblem}`);
        }
        if (typeof operator !== 'string' || !(selectorOperators as readonly string[]).includes(operator)) {
          problems.push(
            `${at}.operator: ${describeValue(operator)} is not one of ${quoted(selectorOperators)}`,
          );
          return;
        }
        const listed = values === undefined || values === null ? [] : values;
        if (!Array.isArray(listed) || listed.some((v) => typeof v !== 'string')) {
          problems.push(`${at}.values: must be a list of label values`);
          return;
        }
        const strings = listed as string[];
        for (const v of strings) {
          const valueProblem = labelValueProblem(v);
          if (valueProblem)
            problems.push(`${at}.values: invalid label value ${JSON.stringify(v)}: ${valueProblem}`);
        }
        const needsValues = operator === 'In' || operator === 'NotIn';
        if (needsValues && strings.length === 0)
          problems.push(`${at}.values: ${operator} needs at least one value`);
        if (!needsValues && strings.length > 0)
          problems.push(`${at}.values: ${operator} takes no values (found ${strings.length})`);
        if (typeof key === 'string')
          requirements.push({
            key,
            operator: operator as LabelRequirement['operator'],
            values: [...strings],
          });
      });
  }
  return problems.length > before ? undefined : { requirements };
}

interface ParsedQuota {
  nominal: Resources;
  borrowing: Resources;
  lending: Resources;
}

function parseResources(value: unknown, cohort: string | undefined, problems: string[]): ParsedQuota {
  const quota: ParsedQuota = { nominal: {}, borrowing: {}, lending: {} };
  if (!Array.isArray(value) || value.length === 0) {
    problems.push(
      'spec.resources: required, at least one {name, nominalQuota}: a queue admits only what its quota covers',
    );
    return quota;
  }
  const seen = new Map<string, number>();
  value.forEach((entry: unknown, index) => {
    const at = `spec.resources[${index}]`;
    if (!isFields(entry)) {
      problems.push(`${at}: must be an object with name and nominalQuota`);
      return;
    }
    const { name } = entry;
    if (typeof name !== 'string' || name.length > 253 || !resourceNamePattern.test(name)) {
      problems.push(
        `${at}.name: ${describeValue(name)} is not a resource name (cpu, memory, ${workloadCountResource}, or a qualified name such as nvidia.com/gpu)`,
      );
      return;
    }
    const first = seen.get(name);
    if (first !== undefined) {
      problems.push(`${at}.name: ${JSON.stringify(name)} is already listed at spec.resources[${first}]`);
      return;
    }
    seen.set(name, index);

    const nominal = amountOf(name, entry.nominalQuota, `${at}.nominalQuota`, problems, true);
    if (nominal !== undefined) quota.nominal[name] = nominal;
    const borrowing = amountOf(name, entry.borrowingLimit, `${at}.borrowingLimit`, problems, false);
    const lending = amountOf(name, entry.lendingLimit, `${at}.lendingLimit`, problems, false);
    for (const [field, amount] of [
      ['borrowingLimit', borrowing],
      ['lendingLimit', lending],
    ] as const)
      if (amount !== undefined && cohort === undefined)
        problems.push(
          `${at}.${field}: needs spec.cohort; only queues of one cohort lend each other quota (set a cohort or remove ${field})`,
        );
    if (borrowing !== undefined) quota.borrowing[name] = borrowing;
    if (lending !== undefined) {
      quota.lending[name] = lending;
      if (nominal !== undefined && lending > nominal)
        problems.push(
          `${at}.lendingLimit: ${formatResourceAmount(name, lending)} is above nominalQuota ${formatResourceAmount(name, nominal)}; a queue lends at most its own quota`,
        );
    }
  });
  return quota;
}

/**
 * A quantity field in the units of {@link Resources}. `workloads` is a count: a whole number.
 * Undefined when absent (a problem if required) or invalid (a problem).
 */
function amountOf(
  resource: string,
  value: unknown,
  path: string,
  problems: string[],
  required: boolean,
): number | undefined {
  if (value === undefined || value === null) {
    if (required) problems.push(`${path}: required, a quantity such as 40, 500m or 64Gi`);
    return undefined;
  }
  // The CRD takes an integer or a string (x-kubernetes-int-or-string), as resource.Quantity does.
  if (typeof value !== 'string' && !(typeof value === 'number' && Number.isFinite(value))) {
    problems.push(`${path}: ${describeValue(value)} is not a quantity such as 40, 500m or 64Gi`);
    return undefined;
  }
  const text = String(value);
  const plain = parseQuantity(text);
  if (plain === undefined) {
    problems.push(`${path}: ${JSON.stringify(text)} is not a quantity such as 40, 500m or 64Gi`);
    return undefined;
  }
  if (plain < 0) {
    problems.push(`${path}: ${text} is negative; a quota is 0 or more`);
    return undefined;
  }
  if (resource === workloadCountResource && !Number.isInteger(plain)) {
    problems.push(`${path}: ${text} is not a whole number; ${workloadCountResource} counts workloads`);
    return undefined;
  }
  const amount = resourceAmount(resource, text);
  if (amount === undefined || !Number.isSafeInteger(amount)) {
    problems.push(
      `${path}: ${text} is too large to count exactly (at most ${Number.MAX_SAFE_INTEGER} ${resource === 'cpu' ? 'millicores' : 'units'}); for no limit, set a quota above what the fleet has`,
    );
    return undefined;
  }
  return amount;
}

/** The resources summed into the GPU column: every vendor's `<vendor>/gpu` (nvidia.com/gpu, amd.com/gpu). */
export function isGpuResource(resource: string): boolean {
  return resource.endsWith('/gpu');
}

/**
 * The `kubectl get dispatchqueues` columns: `used/nominal` of cpu, memory and GPUs (`4/40`,
 * `8Gi/64Gi`), `-` for one the queue does not name. GPUs of several vendors are summed, as one
 * column can show one number. `used` may lack a resource (nothing of it admitted: 0).
 */
export function queueStatusColumns(nominal: Resources, used: Resources): DispatchQueueStatus['columns'] {
  const column = (names: string[]): string => {
    if (names.length === 0) return '-';
    // Summed names share a unit only when they are GPUs; a single name keeps its own formatting.
    const unit = names.length === 1 ? names[0]! : 'gpu';
    const total = (of: Resources) =>
      names.reduce((sum, name) => sum + (Object.hasOwn(of, name) ? of[name]! : 0), 0);
    return `${formatResourceAmount(unit, total(used))}/${formatResourceAmount(unit, total(nominal))}`;
  };
  const named = Object.keys(nominal);
  return {
    cpu: column(named.filter((name) => name === 'cpu')),
    memory: column(named.filter((name) => name === 'memory')),
    gpu: column(named.filter(isGpuResource).sort()),
  };
}
