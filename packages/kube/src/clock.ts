/** Where time comes from: every decision that depends on time reads this, so tests can fix it. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
