// The workload kinds the API shows: exactly those the controller dispatches, chosen by the same
// shared code (@jobrelay/kinds: knownKinds, chooseKinds, dispatchableKinds) from the same flags,
// and how a request names one: by adapter name in URLs and filters (`raycluster`), by
// apiVersion and kind in a manifest (`ray.io/v1`, `RayCluster`). Nothing here names a kind.
import {
  type AnyWorkloadKindAdapter,
  apiVersionOf,
  chooseKinds,
  dispatchableKinds,
  type KindChoice,
  type KindSelectionConfig,
  knownKinds,
} from '@jobrelay/kinds';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { ApiProblem } from './problems.ts';

/**
 * The kinds named by the flags, each with its claimed value. Pure but for reading
 * --generic-kinds-file: a bad flag is a ConfigError before anything connects.
 */
export function chosenKinds(config: KindSelectionConfig): KindChoice[] {
  return chooseKinds(config, knownKinds(config));
}

/**
 * Of the chosen kinds, those the management cluster serves and nobody else claims (Kueue's
 * MultiKueue): what the controller dispatches there, so what the API shows.
 */
export function servedKinds(
  choices: KindChoice[],
  management: KubeConfig,
  log: Logger,
): Promise<KindChoice[]> {
  return dispatchableKinds(choices, management, log);
}

/** `raycluster (ray.io/v1 RayCluster)`. */
export function describeKind(adapter: AnyWorkloadKindAdapter): string {
  return `${adapter.name} (${apiVersionOf(adapter.resource)} ${adapter.resource.kind})`;
}

/** The dispatched kinds, and how requests name them. */
export class WorkloadKinds {
  readonly choices: readonly KindChoice[];

  constructor(choices: readonly KindChoice[]) {
    const names = choices.map((choice) => choice.adapter.name);
    const twice = names.find((name, i) => names.indexOf(name) !== i);
    if (twice) throw new Error(`two dispatched kinds are named ${JSON.stringify(twice)}`);
    this.choices = choices;
  }

  get adapters(): AnyWorkloadKindAdapter[] {
    return this.choices.map((choice) => choice.adapter);
  }

  /** By adapter name (`job`, `raycluster`), as URLs and filters name kinds. */
  named(name: string): AnyWorkloadKindAdapter | undefined {
    return this.choices.find((choice) => choice.adapter.name === name)?.adapter;
  }

  /** By a manifest's apiVersion and kind (`ray.io/v1`, `RayCluster`). */
  ofManifest(apiVersion: string, kind: string): AnyWorkloadKindAdapter | undefined {
    return this.choices.find(
      ({ adapter }) => apiVersionOf(adapter.resource) === apiVersion && adapter.resource.kind === kind,
    )?.adapter;
  }

  /** `job (batch/v1 Job), raycluster (ray.io/v1 RayCluster), ...`: for messages naming the choice. */
  describe(): string {
    return this.choices.length === 0
      ? 'none (the management cluster serves none of the kinds configured)'
      : this.choices.map((choice) => describeKind(choice.adapter)).join(', ');
  }

  /**
   * The kinds a comma-separated `kind` filter names, in the dispatched order; every kind
   * without one. Unknown names are returned apart (the route refuses them after authorization).
   */
  select(filter: string | undefined): { adapters: AnyWorkloadKindAdapter[]; unknown: string[] } {
    if (filter === undefined || filter === '') return { adapters: this.adapters, unknown: [] };
    const wanted = new Set(
      filter
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    );
    return {
      adapters: this.adapters.filter((adapter) => wanted.has(adapter.name)),
      unknown: [...wanted].filter((name) => !this.named(name)),
    };
  }

  /**
   * The adapters of a validated `kind` filter, or a 400 naming the field and the kinds there are.
   */
  selectOrRefuse(filter: string | undefined, field: string): AnyWorkloadKindAdapter[] {
    const { adapters, unknown } = this.select(filter);
    if (unknown.length === 0) return adapters;
    const message = `unknown kind${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => JSON.stringify(n)).join(', ')}; this API shows ${this.describe()}`;
    throw new ApiProblem('validation-failed', `${field}: ${message}`, { errors: [{ path: field, message }] });
  }

  /** The adapter a path names, or a 404 (as the apiserver answers for a resource type it does not serve). */
  namedOrNotFound(name: string): AnyWorkloadKindAdapter {
    const adapter = this.named(name);
    if (!adapter) {
      throw new ApiProblem(
        'not-found',
        `no dispatched kind ${JSON.stringify(name)}; this API shows ${this.describe()}`,
      );
    }
    return adapter;
  }

  /** The adapter of a manifest, or a 422 unsupported-kind saying which kinds are dispatched. */
  ofManifestOrRefuse(apiVersion: string, kind: string): AnyWorkloadKindAdapter {
    const adapter = this.ofManifest(apiVersion, kind);
    if (!adapter) {
      throw new ApiProblem(
        'unsupported-kind',
        `${apiVersion} ${kind} is not a kind jobrelay dispatches here; the dispatched kinds are ${this.describe()}`,
      );
    }
    return adapter;
  }
}
