/**
 * Client-side rate limit, as client-go's: `qps` tokens a second, at most `burst` saved up.
 * Callers queue in order; none is refused, each waits for its token.
 */
export class TokenBucket {
  private readonly qps: number;
  private readonly burst: number;
  private tokens: number;
  private last: number;
  private readonly now: () => number;
  private chain: Promise<void> = Promise.resolve();

  constructor(options: { qps: number; burst: number; now?: () => number }) {
    if (!(options.qps > 0)) throw new Error(`qps must be positive, got ${options.qps}`);
    if (!(options.burst >= 1)) throw new Error(`burst must be at least 1, got ${options.burst}`);
    this.qps = options.qps;
    this.burst = options.burst;
    this.tokens = options.burst;
    this.now = options.now ?? Date.now;
    this.last = this.now();
  }

  /** How long the next caller would wait, in ms (0 if a token is ready). */
  private takeOrWait(): number {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.tokens) / this.qps) * 1000);
  }

  take(): Promise<void> {
    const turn = this.chain.then(async () => {
      for (let wait = this.takeOrWait(); wait > 0; wait = this.takeOrWait()) {
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    });
    this.chain = turn;
    return turn;
  }
}
