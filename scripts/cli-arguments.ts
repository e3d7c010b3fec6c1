// Options shared by the scripts' command lines (npm run chaos, differential, bench:api).

/**
 * A whole-number option: `fallback` when it is absent; otherwise at least `min`, or the script
 * stops before doing anything, with the option named, the value given and its usage (exit 2).
 */
export function integerOption(
  name: string,
  value: string | undefined,
  fallback: number,
  { min, usage }: { min: number; usage: string },
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) {
    const kind =
      min === 0
        ? 'a non-negative integer'
        : min === 1
          ? 'a positive integer'
          : `an integer of at least ${min}`;
    console.error(`--${name} must be ${kind}, got ${value}\n${usage}`);
    process.exit(2);
  }
  return n;
}
