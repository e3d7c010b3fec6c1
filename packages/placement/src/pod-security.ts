// Pod Security admission as jobrelay reads it from namespace labels: the level a namespace
// enforces, how two levels compare, and the labels a worker namespace jobrelay manages must
// carry so that it enforces what its management namespace does. A dispatched Job makes no pods
// on the management cluster (its managedBy is foreign to the built-in controller), so Pod
// Security there never judges them: the worker namespace is where it has to hold.

/** The Pod Security Standards, weakest first. */
export const podSecurityLevels = ['privileged', 'baseline', 'restricted'] as const;
export type PodSecurityLevel = (typeof podSecurityLevels)[number];

/** Every Pod Security admission label shares this prefix: `<mode>` and `<mode>-version` for enforce, audit, warn. */
export const podSecurityLabelPrefix = 'pod-security.kubernetes.io/';
export const podSecurityEnforceLabel = `${podSecurityLabelPrefix}enforce`;

/**
 * The level a namespace with these labels enforces, as Pod Security admission reads it
 * (k8s.io/pod-security-admission api.PolicyToEvaluate and ParseLevel): no enforce label is
 * privileged; a value that is not a level is restricted, the strictest, as the admission
 * plugin falls back to it. jobrelay reads labels only: an apiserver whose admission
 * configuration enforces a default level on unlabelled namespaces is not seen, so a fleet
 * states its levels as labels.
 */
export function podSecurityLevelOf(labels: Readonly<Record<string, string>> | undefined): PodSecurityLevel {
  const value = labels?.[podSecurityEnforceLabel];
  if (value === undefined) return 'privileged';
  return (podSecurityLevels as readonly string[]).includes(value)
    ? (value as PodSecurityLevel)
    : 'restricted';
}

/** Whether `level` lets through less than or the same as `than` (restricted is stricter than baseline). */
export function atLeastAsStrict(level: PodSecurityLevel, than: PodSecurityLevel): boolean {
  return podSecurityLevels.indexOf(level) >= podSecurityLevels.indexOf(than);
}

/** The Pod Security labels among `labels` (enforce, audit, warn and their versions). */
export function podSecurityLabelsOf(
  labels: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(labels ?? {}).filter(([key]) => key.startsWith(podSecurityLabelPrefix)),
  );
}

/**
 * The labels' part of a merge patch that makes `have`'s Pod Security labels equal to `want`'s
 * (others added or changed, extra ones removed with null), or undefined when they are equal.
 * Labels outside the Pod Security prefix are never part of it.
 */
export function podSecurityLabelPatch(
  want: Readonly<Record<string, string>> | undefined,
  have: Readonly<Record<string, string>> | undefined,
): Record<string, string | null> | undefined {
  const wanted = podSecurityLabelsOf(want);
  const present = podSecurityLabelsOf(have);
  const patch: Record<string, string | null> = {};
  for (const [key, value] of Object.entries(wanted)) if (present[key] !== value) patch[key] = value;
  for (const key of Object.keys(present)) if (!(key in wanted)) patch[key] = null;
  return Object.keys(patch).length > 0 ? patch : undefined;
}
