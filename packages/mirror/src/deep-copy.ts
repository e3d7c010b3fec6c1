/**
 * A deep copy of API object data: plain JSON (objects, arrays and primitives), as every object
 * is read and cached. Keys whose value is undefined are left out (JSON leaves them out too).
 *
 * Why not `structuredClone`: it runs V8's serializer, and building each mirror's spec with it
 * was 1–2 % of the controller's CPU in a profiled drain; this walk is about ten times faster on a
 * Job spec (8.4 µs against 0.8 µs on this project's machine).
 */
export function deepCopy<T>(value: T): T {
  return copy(value) as T;
}

function copy(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copy(value[i]);
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const field = (value as Record<string, unknown>)[key];
    if (field === undefined) continue;
    // An own "__proto__" key (JSON.parse makes one) must stay a key, not set the prototype.
    if (key === '__proto__')
      Object.defineProperty(out, key, {
        value: copy(field),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else out[key] = copy(field);
  }
  return out;
}
