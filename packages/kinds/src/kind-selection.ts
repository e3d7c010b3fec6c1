import { readFileSync } from 'node:fs';
import { ConfigError } from '@jobrelay/kube';
import { defaultManagedBy } from '@jobrelay/mirror';
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { z } from 'zod';
import { genericAdapter } from './generic/generic-adapter.ts';
import { parseGenericKindConfigs } from './generic/generic-kind-config.ts';
import { discoverServedKinds } from './kind-discovery.ts';
import { builtInKinds } from './kind-list.ts';
import { managedByValue } from './managed-by-value.ts';
import { findMultiKueue } from './multikueue-detection.ts';
import { multiKueueManagedBy } from './ray/ray-types.ts';
import type { AnyWorkloadKindAdapter } from './workload-kind-adapter.ts';

/**
 * The zod fields of the kind flags, one definition for the controller and the API (the API
 * must select exactly the kinds the controller dispatches, from the same flags).
 */
export const kindSelectionFields = {
  /** --managed-by: the installation's value, claimed by the kinds whose policy follows it. */
  managedBy: managedByValue
    .refine((v) => v !== 'kubernetes.io/job-controller', 'is reserved for the built-in Job controller')
    .default(defaultManagedBy),
  /**
   * --kinds: the workload kinds to dispatch, by adapter name. A kind the management cluster
   * does not serve (its CRD is not installed) is skipped with a log line.
   */
  kinds: z
    .array(z.string().regex(/^[a-z0-9-]+$/, 'must be a kind name like job or raycluster'))
    .default(builtInKinds.map((kind) => kind.name)),
  /**
   * --kind-managed-by: the value claimed per kind, as kind=value. A kind whose API restricts
   * the value (KubeRay's accept only kueue.x-k8s.io/multikueue) defaults to the one it accepts.
   */
  kindManagedBy: z
    .array(
      z.string().regex(/^[a-z0-9-]+=\S+$/, 'must be kind=value, e.g. raycluster=kueue.x-k8s.io/multikueue'),
    )
    .default([]),
  /** --generic-kinds-file: a JSON or YAML file of kinds dispatched by the generic adapter. */
  genericKindsFile: z.string().min(1).optional(),
};

/** The configuration that selects kinds (the controller's and the API's flags of the same names). */
export interface KindSelectionConfig {
  /** --kinds: adapter names. */
  kinds: readonly string[];
  /** --kind-managed-by: kind=value entries. */
  kindManagedBy: readonly string[];
  /** --managed-by: the installation's value (ManagedByPolicy.followsInstallationValue). */
  managedBy: string;
  /** --generic-kinds-file. */
  genericKindsFile?: string | undefined;
}

/** A kind to dispatch and the managedBy value claimed for it. */
export interface KindChoice {
  adapter: AnyWorkloadKindAdapter;
  managedBy: string;
}

/**
 * Every kind the controller can dispatch: the built-in ones and those of --generic-kinds-file
 * (a generic kind may not take a built-in kind's name). A file that cannot be read or parsed
 * is a ConfigError naming the flag and the field.
 */
export function knownKinds(config: Pick<KindSelectionConfig, 'genericKindsFile'>): AnyWorkloadKindAdapter[] {
  if (!config.genericKindsFile) return [...builtInKinds];
  let text: string;
  try {
    text = readFileSync(config.genericKindsFile, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `--generic-kinds-file: cannot read ${config.genericKindsFile}: ${(err as Error).message}`,
    );
  }
  const parsed = parseGenericKindConfigs(text);
  if (!parsed.ok) throw new ConfigError(`--generic-kinds-file ${config.genericKindsFile}: ${parsed.problem}`);
  const generic = parsed.configs.map((kind) => genericAdapter(kind));
  const clash = generic.find((kind) => builtInKinds.some((builtIn) => builtIn.name === kind.name));
  if (clash) {
    throw new ConfigError(
      `--generic-kinds-file: ${JSON.stringify(clash.name)} is a built-in kind's name; give the generic kind another name`,
    );
  }
  return [...builtInKinds, ...generic];
}

/**
 * The kinds named by --kinds, each with its claimed value: a --kind-managed-by entry, else
 * --managed-by for a kind whose policy follows the installation's value, else the kind's default. Pure: a bad name or a value the kind's
 * API would refuse is a ConfigError naming the flag, before anything starts.
 */
export function chooseKinds(
  config: Pick<KindSelectionConfig, 'kinds' | 'kindManagedBy' | 'managedBy'>,
  known: readonly AnyWorkloadKindAdapter[],
): KindChoice[] {
  const overrides = new Map<string, string>();
  for (const entry of config.kindManagedBy) {
    const at = entry.indexOf('=');
    const kind = entry.slice(0, at);
    if (!known.some((adapter) => adapter.name === kind)) {
      throw new ConfigError(
        `--kind-managed-by: unknown kind ${JSON.stringify(kind)}; known kinds: ${known.map((a) => a.name).join(', ')}`,
      );
    }
    overrides.set(kind, entry.slice(at + 1));
  }
  return [...new Set(config.kinds)].map((name) => {
    const adapter = known.find((candidate) => candidate.name === name);
    if (!adapter) {
      throw new ConfigError(
        `--kinds: unknown kind ${JSON.stringify(name)}; known kinds: ${known.map((a) => a.name).join(', ')}`,
      );
    }
    const managedBy =
      overrides.get(name) ??
      (adapter.managedBy.followsInstallationValue ? config.managedBy : adapter.managedBy.default);
    const accepted = adapter.managedBy.accepted;
    if (accepted && !accepted.includes(managedBy)) {
      throw new ConfigError(
        `--kind-managed-by: ${name} objects only accept spec.managedBy ${accepted.join(' or ')} (their API refuses any other value), got ${JSON.stringify(managedBy)}`,
      );
    }
    return { adapter, managedBy };
  });
}

/**
 * Of the chosen kinds, those this management cluster can dispatch: its API serves them
 * (a kind whose CRD is not installed is skipped, said once), and nobody else claims their
 * value. Kueue's MultiKueue claims kueue.x-k8s.io/multikueue: beside it, kinds claiming that
 * value are refused with a clear error rather than fought over; the other kinds go on.
 */
export async function dispatchableKinds(
  choices: KindChoice[],
  management: KubeConfig,
  log: Logger,
): Promise<KindChoice[]> {
  const custom = management.makeApiClient(CustomObjectsApi);
  const servedNames = await discoverServedKinds(
    custom,
    choices.map((choice) => choice.adapter),
  );
  const served = choices.filter((choice) => servedNames.has(choice.adapter.name));
  for (const { adapter } of choices.filter((choice) => !servedNames.has(choice.adapter.name))) {
    const { group, version, kind } = adapter.resource;
    log.info(
      { kind: adapter.name },
      `the management cluster does not serve ${group}/${version} ${kind}: not dispatching ${kind}s`,
    );
  }
  if (!served.some((choice) => choice.managedBy === multiKueueManagedBy)) return served;
  const multiKueue = await findMultiKueue(custom);
  if (!multiKueue) return served;
  const refused = served.filter((choice) => choice.managedBy === multiKueueManagedBy);
  log.error(
    { kinds: refused.map((choice) => choice.adapter.name), found: multiKueue },
    `Kueue's MultiKueue runs on this management cluster (${multiKueue}) and claims spec.managedBy ${multiKueueManagedBy}, ` +
      `the only value ${refused.map((c) => c.adapter.resource.kind).join(' and ')} accept besides their own operator's: ` +
      'jobrelay refuses to dispatch them here rather than fight over the same objects. ' +
      'Let MultiKueue dispatch these kinds, or run jobrelay on a management cluster without it.',
  );
  return served.filter((choice) => choice.managedBy !== multiKueueManagedBy);
}
