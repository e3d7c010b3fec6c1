import { getHeapStatistics } from 'node:v8';
import type { Logger } from 'pino';

export interface MemoryAfterBurstsOptions {
  log: Logger;
  /** How often the heap and the event loop are looked at. */
  checkEveryMs?: number;
  /** The event loop counts as quiet below this utilisation (0–1) over the last interval. */
  quietUtilization?: number;
  /** The heap must have grown by at least this many bytes since the last reduction ... */
  minGrowthBytes?: number;
  /** ... and by at least this fraction of what the last reduction left. */
  minGrowthRatio?: number;
  /** Reads the heap's reserved size and the event loop's utilisation (tests pass their own). */
  probe?: MemoryProbe;
  /** The memory-reducing collection (tests pass their own); default: V8's, through `gc`. */
  collect?: () => void;
}

export interface MemoryProbe {
  heapTotalBytes(): number;
  /** The event loop's utilisation (0–1) since the previous call. */
  utilizationSinceLast(): number;
}

/**
 * Returns the memory a burst of work grew the V8 heap by, once the burst is over.
 *
 * V8 sizes its heap for throughput while work pours in (a backlog of 10,000 Jobs, or the relist
 * of as many after a restart) and gives the extra back only slowly afterwards: 30 s after a
 * 10,000-Job burst the controller still held about 300 MiB, against 240–250 MiB once settled
 * (docs/benchmarks.md). A controller's memory limit is sized for the quiet hours, so here,
 * every `checkEveryMs`, if the event loop was nearly idle over the last interval and the heap
 * has grown well past what the last reduction left, V8 is asked for the collection it runs on
 * a low-memory notification: full, compacting, returning free pages to the system. It costs a
 * few hundred ms of CPU once per burst; while the heap does not grow, it never runs.
 *
 * V8 exposes that collection to JavaScript only through `gc`, which `--expose-gc` defines
 * (controllerNodeFlags); without it this does nothing.
 */
export class MemoryAfterBursts {
  private readonly options: Required<Omit<MemoryAfterBurstsOptions, 'collect'>>;
  private readonly collect: (() => void) | undefined;
  private baselineBytes: number;
  private timer: NodeJS.Timeout | undefined;
  /** Collections run so far. */
  reductions = 0;

  constructor(options: MemoryAfterBurstsOptions) {
    this.options = {
      checkEveryMs: 5_000,
      quietUtilization: 0.05,
      minGrowthBytes: 32 * 2 ** 20,
      minGrowthRatio: 0.25,
      probe: v8Probe(),
      ...options,
    };
    this.collect = options.collect ?? v8MemoryReducingCollection();
    this.baselineBytes = this.options.probe.heapTotalBytes();
  }

  /** Whether a collection can be asked for at all (`--expose-gc`, or a `collect` given). */
  get enabled(): boolean {
    return this.collect !== undefined;
  }

  start(): void {
    if (!this.collect) {
      this.options.log.info('no heap reduction after bursts: node runs without --expose-gc');
      return;
    }
    this.options.probe.utilizationSinceLast();
    this.timer = setInterval(() => this.check(), this.options.checkEveryMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One look: reduces when quiet and grown; returns whether it did. */
  check(): boolean {
    const { probe, quietUtilization, minGrowthBytes, minGrowthRatio } = this.options;
    const quiet = probe.utilizationSinceLast() < quietUtilization;
    const heapBytes = probe.heapTotalBytes();
    const grownBy = heapBytes - this.baselineBytes;
    if (!this.collect || !quiet || grownBy < Math.max(minGrowthBytes, this.baselineBytes * minGrowthRatio)) {
      // A heap that shrank on its own is the new baseline: growth counts from the smallest seen.
      if (heapBytes < this.baselineBytes) this.baselineBytes = heapBytes;
      return false;
    }
    const began = performance.now();
    this.collect();
    const tookMs = Math.round(performance.now() - began);
    this.reductions += 1;
    const after = probe.heapTotalBytes();
    this.options.log.info(
      { heapMiB: { before: toMiB(heapBytes), after: toMiB(after) }, tookMs },
      'quiet after a burst: heap reduced',
    );
    this.baselineBytes = after;
    // The collection itself is not work the next look should see.
    probe.utilizationSinceLast();
    return true;
  }
}

function toMiB(bytes: number): number {
  return Math.round(bytes / 2 ** 20);
}

function v8Probe(): MemoryProbe {
  let last = performance.eventLoopUtilization();
  return {
    heapTotalBytes: () => getHeapStatistics().total_heap_size,
    utilizationSinceLast() {
      const now = performance.eventLoopUtilization();
      const since = performance.eventLoopUtilization(now, last);
      last = now;
      return since.utilization;
    },
  };
}

/** V8's low-memory collection ("last resort": full, compacting, shrinking), when `gc` is exposed. */
function v8MemoryReducingCollection(): (() => void) | undefined {
  const gc = (globalThis as { gc?: (options?: Record<string, string>) => void }).gc;
  if (typeof gc !== 'function') return undefined;
  return () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}
