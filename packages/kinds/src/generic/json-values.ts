// Plain-JSON helpers shared by the custom-resource adapters (RayCluster, RayJob, generic):
// objects as the apiserver sends them, compared and patched without knowing their schema.

import { deepCopy } from '@jobrelay/mirror';

/** A JSON object (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep equality of JSON values; key order does not matter, array order does. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a).filter((key) => a[key] !== undefined);
    const otherKeys = Object.keys(b).filter((key) => b[key] !== undefined);
    return keys.length === otherKeys.length && keys.every((key) => jsonEqual(a[key], b[key]));
  }
  return false;
}

/** Values a kind's API treats as "not there": decides what `equalIgnoringAbsent` drops. */
export type AbsentRule = (value: unknown) => boolean;

/** Absent: undefined, null (the apiserver prunes it), an empty object or array. Nothing else. */
export const absentWhenNullOrEmpty: AbsentRule = (value) =>
  value === undefined ||
  value === null ||
  (Array.isArray(value) && value.length === 0) ||
  (isPlainObject(value) && Object.keys(value).length === 0);

/**
 * Absent as a Go `omitempty` field is: also "", 0 and false. Right for statuses whose every
 * field is omitempty or defaulted to its zero value (KubeRay's), where a zero and a missing
 * field read the same to the controller.
 */
export const absentWhenZeroValue: AbsentRule = (value) =>
  absentWhenNullOrEmpty(value) || value === '' || value === 0 || value === false;

function withoutAbsent(value: unknown, isAbsent: AbsentRule): unknown {
  let normalized: unknown = value;
  if (Array.isArray(value)) {
    normalized = value.map((item) => withoutAbsent(item, isAbsent) ?? null);
  } else if (isPlainObject(value)) {
    const kept: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const inner = withoutAbsent(item, isAbsent);
      if (inner !== undefined) kept[key] = inner;
    }
    normalized = kept;
  }
  return isAbsent(normalized) ? undefined : normalized;
}

/** Equal once every field `isAbsent` calls absent is dropped, at every depth. */
export function equalIgnoringAbsent(a: unknown, b: unknown, isAbsent: AbsentRule): boolean {
  return jsonEqual(withoutAbsent(a, isAbsent), withoutAbsent(b, isAbsent));
}

/**
 * Whether `have` already says everything `want` says. Fields only `have` has are ignored (its
 * apiserver's defaults, another writer's additions): a field the origin does not state has
 * no opinion, so skew in defaulting between two clusters never makes a patch that cannot
 * stick. Arrays must have the same length and agree element by element.
 */
export function agrees(have: unknown, want: unknown): boolean {
  if (want === undefined) return true;
  if (Array.isArray(want)) {
    return Array.isArray(have) && have.length === want.length && want.every((w, i) => agrees(have[i], w));
  }
  if (isPlainObject(want)) {
    return isPlainObject(have) && Object.entries(want).every(([key, w]) => agrees(have[key], w));
  }
  return have === want;
}

/**
 * The JSON merge patch (RFC 7386) that brings `have` in line with every field `want` states,
 * or undefined when it already agrees. Objects are patched field by field; an array that
 * differs anywhere is sent whole (a merge patch replaces arrays), so a caller must put in
 * `want` the whole array it wants, including what it must keep of `have`'s. Never removes a
 * field (see `agrees`).
 */
export function mergePatchTowards(
  have: Record<string, unknown> | undefined,
  want: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const patch: Record<string, unknown> = {};
  for (const [key, wanted] of Object.entries(want)) {
    const current = have?.[key];
    if (agrees(current, wanted)) continue;
    if (isPlainObject(wanted) && isPlainObject(current)) {
      const nested = mergePatchTowards(current, wanted);
      if (nested) patch[key] = nested;
    } else {
      patch[key] = deepCopy(wanted);
    }
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}

/** A dot-separated field path's segments (`spec.suspend` -> ['spec', 'suspend']). */
export function pathSegments(path: string): string[] {
  return path.split('.');
}

/** The value at a dot path; a numeric segment indexes an array. Undefined when any step is missing. */
export function valueAt(root: unknown, path: string): unknown {
  let node: unknown = root;
  for (const segment of pathSegments(path)) {
    if (Array.isArray(node) && /^[0-9]+$/.test(segment)) node = node[Number(segment)];
    else if (isPlainObject(node)) node = node[segment];
    else return undefined;
  }
  return node;
}

/** `{a: {b: value}}` for the path `a.b`: the nested object a merge patch of that one field is. */
export function objectAt(path: string, value: unknown): Record<string, unknown> {
  const segments = pathSegments(path);
  let result: Record<string, unknown> = { [segments.at(-1)!]: value };
  for (const segment of segments.slice(0, -1).reverse()) result = { [segment]: result };
  return result;
}

/** Merges `b` into `a` as a merge patch would (both plain objects; b's arrays and scalars win). */
export function mergeObjects(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
): Record<string, unknown> {
  const result: Record<string, unknown> = { ...a };
  for (const [key, value] of Object.entries(b)) {
    const current = result[key];
    result[key] = isPlainObject(current) && isPlainObject(value) ? mergeObjects(current, value) : value;
  }
  return result;
}
