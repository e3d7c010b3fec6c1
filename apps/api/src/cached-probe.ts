/**
 * One probe's answer, shared: callers within `ttlMs` of the last answer get it, and callers
 * while a probe runs wait for that one. So /readyz, however often it is asked, probes Redis
 * and the apiserver at most once per interval (plus the time one probe takes).
 */
export class CachedProbe<T> {
  readonly #probe: () => Promise<T>;
  readonly #ttlMs: number;
  readonly #now: () => number;
  #answer: { value: T; at: number } | undefined;
  #running: Promise<T> | undefined;

  constructor(probe: () => Promise<T>, ttlMs: number, now: () => number = Date.now) {
    this.#probe = probe;
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  get(): Promise<T> {
    if (this.#answer && this.#now() - this.#answer.at < this.#ttlMs)
      return Promise.resolve(this.#answer.value);
    this.#running ??= this.#probe().then(
      (value) => {
        this.#answer = { value, at: this.#now() };
        this.#running = undefined;
        return value;
      },
      (err: unknown) => {
        this.#running = undefined;
        throw err;
      },
    );
    return this.#running;
  }
}
