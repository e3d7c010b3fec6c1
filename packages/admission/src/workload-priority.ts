// A workload's priority is the one Kubernetes would give its pods: the Priority admission plugin
// (plugin/pkg/admission/priority) resolves a pod's priorityClassName through PriorityClass, and
// a pod that names none gets the globalDefault class's value, else 0. A workload with several pod
// templates (a RayCluster's head and worker groups) ranks at its highest: admission is all of its
// pods at once, and the most important of them decides how urgent the whole is.

import type { PriorityClassLookup, WorkloadPriority } from './queue-model.ts';

/** What a pod template contributes: its PriorityClass's name, if it names one. */
export interface PriorityTemplate {
  spec: { priorityClassName?: string };
}

/**
 * The highest priority among `templates`, with the class it came from (undefined when it is the
 * plain 0 of no class at all). A template that names no class (or an empty name, which
 * Kubernetes reads as none) takes the global default; no templates at all are one pod that names
 * none. A class that does not exist refuses the workload, as the Priority plugin would refuse its
 * pods on every cluster: admitting it would reserve quota for pods that can never be created.
 */
export function workloadPriority(
  templates: readonly PriorityTemplate[] | undefined,
  classes: PriorityClassLookup,
): WorkloadPriority {
  const names = (templates === undefined || templates.length === 0 ? [undefined] : templates).map(
    (template) => template?.spec.priorityClassName || undefined,
  );
  const missing = [...new Set(names.filter((name) => name !== undefined && classes.get(name) === undefined))];
  if (missing.length > 0)
    return {
      kind: 'refused',
      message: missing
        .map(
          (name) =>
            `PriorityClass ${JSON.stringify(name)} does not exist: create it, or name an existing class in the pod template's priorityClassName`,
        )
        .join('; '),
    };

  let best: { priority: number; className?: string } | undefined;
  for (const name of names) {
    const resolved =
      name === undefined ? defaultPriority(classes) : { priority: classes.get(name)!.value, className: name };
    if (best === undefined || resolved.priority > best.priority) best = resolved;
  }
  return { kind: 'ok', ...best! };
}

function defaultPriority(classes: PriorityClassLookup): { priority: number; className?: string } {
  const globalDefault = classes.globalDefault();
  return globalDefault ? { priority: globalDefault.value, className: globalDefault.name } : { priority: 0 };
}

/** A PriorityClass (scheduling.k8s.io/v1) as an informer caches it: only what priority needs. */
export interface PriorityClassObject {
  metadata?: { name?: string };
  value?: number;
  globalDefault?: boolean;
}

/**
 * A lookup over cached PriorityClasses. An object without a name or an integer value (which the
 * apiserver never stores) is skipped rather than trusted. When several classes are globalDefault
 * (the apiserver refuses a second one, but a cache may see two while one is replaced), the
 * highest value wins, as the Priority plugin's getDefaultPriorityClass picks it; equal values are
 * ordered by name, so every replica decides alike.
 */
export function priorityClassLookup(objects: readonly PriorityClassObject[]): PriorityClassLookup {
  const byName = new Map<string, { value: number }>();
  let globalDefault: { name: string; value: number } | undefined;
  for (const object of objects) {
    const name = object.metadata?.name;
    const value = object.value;
    if (!name || typeof value !== 'number' || !Number.isInteger(value)) continue;
    byName.set(name, { value });
    if (
      object.globalDefault === true &&
      (globalDefault === undefined ||
        value > globalDefault.value ||
        (value === globalDefault.value && name < globalDefault.name))
    )
      globalDefault = { name, value };
  }
  return {
    get: (name) => byName.get(name),
    globalDefault: () => globalDefault,
  };
}

/**
 * The PriorityClasses of a cache, looked up as they are now: rebuilt at the first look-up after
 * the cache changed (`changed`, from its events), not at every one.
 */
export class CachedPriorityClasses implements PriorityClassLookup {
  private lookup: PriorityClassLookup | undefined;
  private readonly list: () => readonly PriorityClassObject[];

  constructor(list: () => readonly PriorityClassObject[]) {
    this.list = list;
  }

  changed(): void {
    this.lookup = undefined;
  }

  get(name: string): { value: number } | undefined {
    return this.current().get(name);
  }

  globalDefault(): { name: string; value: number } | undefined {
    return this.current().globalDefault();
  }

  private current(): PriorityClassLookup {
    this.lookup ??= priorityClassLookup(this.list());
    return this.lookup;
  }
}
