// The Queues page's numbers: a usage bar against nominal quota and the borrowing limit, and the
// share over time the page keeps from its polls (the API keeps no history of queues).

import { parseQuantity } from '@jobrelay/resources';

/** One resource's bar, in percent of its scale, and the words a screen reader hears. */
export interface UsageBar {
  /** What admitted workloads hold up to nominal quota. */
  withinPct: number;
  /** What they hold above it: borrowed from the cohort. */
  borrowedPct: number;
  /** Where nominal quota ends. */
  nominalPct: number;
  /** Where the borrowing limit ends; null when it may borrow what the cohort lends, without limit. */
  limitPct: number | null;
  used: number;
  nominal: number;
  limit: number | null;
}

/**
 * A bar whose scale is nominal plus the borrowing limit (the most the queue may hold), or, when
 * it may borrow without limit, the larger of nominal and what it holds: so nominal sits at the
 * same place for every queue without borrowing, and a queue over nominal shows how far.
 * Quantities are the API's strings; one that does not parse counts as 0.
 */
export function usageBar(used: string | null, nominal: string, borrowingLimit: string | null): UsageBar {
  const usedValue = Math.max(0, used === null ? 0 : (parseQuantity(used) ?? 0));
  const nominalValue = Math.max(0, parseQuantity(nominal) ?? 0);
  const limitValue = borrowingLimit === null ? null : Math.max(0, parseQuantity(borrowingLimit) ?? 0);
  const scale = Math.max(nominalValue + (limitValue ?? 0), usedValue, nominalValue) || 1;
  const pct = (value: number) => Math.min(100, (value / scale) * 100);
  const within = Math.min(usedValue, nominalValue);
  return {
    withinPct: pct(within),
    borrowedPct: Math.min(100 - pct(within), pct(usedValue - within)),
    nominalPct: pct(nominalValue),
    limitPct: limitValue === null ? null : pct(nominalValue + limitValue),
    used: usedValue,
    nominal: nominalValue,
    limit: limitValue,
  };
}

export interface ShareSample {
  /** Milliseconds since the epoch. */
  at: number;
  share: number;
}

/**
 * Each queue's share as the page polled it, the newest `capacity` samples per queue (a ring):
 * memory stays bounded however long the tab is open. A queue not in a poll gets no sample.
 */
export class ShareHistory {
  private readonly capacity: number;
  private readonly byQueue = new Map<string, ShareSample[]>();

  constructor(capacity: number) {
    this.capacity = Math.max(1, capacity);
  }

  /** One poll's shares (decimal strings, as the API gives them); unparsable ones are skipped. */
  record(at: number, shares: ReadonlyArray<{ queue: string; share: string | null | undefined }>): void {
    for (const { queue, share } of shares) {
      const value = share === null || share === undefined ? Number.NaN : Number(share);
      if (!Number.isFinite(value)) continue;
      const samples = this.byQueue.get(queue) ?? [];
      samples.push({ at, share: value });
      if (samples.length > this.capacity) samples.splice(0, samples.length - this.capacity);
      this.byQueue.set(queue, samples);
    }
  }

  /** Oldest first. */
  samples(queue: string): readonly ShareSample[] {
    return this.byQueue.get(queue) ?? [];
  }
}
