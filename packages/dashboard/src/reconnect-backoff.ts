/**
 * How long to wait before reconnect number `attempt` (1 for the first retry): doubling from
 * `baseMs` up to `maxMs`, with up to half of it random (`random` in [0, 1)) so that many
 * dashboards dropped by one API restart do not all come back in the same instant.
 */
export function reconnectDelayMs(
  attempt: number,
  random: number,
  options: { baseMs?: number; maxMs?: number } = {},
): number {
  const baseMs = options.baseMs ?? 1_000;
  const maxMs = options.maxMs ?? 30_000;
  const exponent = Math.min(Math.max(attempt, 1) - 1, 30);
  const ceiling = Math.min(maxMs, baseMs * 2 ** exponent);
  const jitter = Math.min(Math.max(random, 0), 0.999_999);
  return Math.round(ceiling / 2 + (ceiling / 2) * jitter);
}
