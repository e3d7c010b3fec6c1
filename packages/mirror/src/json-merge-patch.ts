/**
 * RFC 7386 JSON merge patch, as the apiserver applies one: `patch`'s fields replace `target`'s,
 * objects are merged field by field, null removes a field, arrays are replaced whole. Neither
 * argument is changed. The planner uses it to see a spec change as the worker would store it.
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}
