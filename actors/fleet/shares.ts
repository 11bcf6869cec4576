/**
 * How a key's limits are shared by the instances of a fleet, as pure functions.
 *
 * Rates (calls and messages per second) need no share: every instance keeps the key's whole
 * bucket and takes from it what the others admitted as well (see ConsumedElsewhere in
 * actors/account/decide.ts), so the budget is one, seen by each instance a sync interval late.
 *
 * Open WebSocket connections are a count, not a rate: two instances that each see 49 of 50 would
 * each open one more. So each instance may hold its own connections as last published plus its
 * part of what is free, and the parts add up to the key's limit whenever the instances have seen
 * the same publications: 60 connections arriving at once over 3 instances open at most 50.
 */

export interface AllowanceInput {
  /** The key's limit across the fleet. */
  max: number
  /** This instance's open connections of the key, as it last published them. */
  published: number
  /** The other live instances' open connections of the key, as they last published them. */
  others: readonly number[]
  /** This instance's place among the live instances, sorted by id (0 first): who gets the remainder. */
  rank: number
}

/**
 * How many of the key's connections this instance may hold now.
 * @example
 * connectionAllowance({ max: 50, published: 0, others: [0, 0], rank: 0 }) // 17 (16, 16 for the others)
 */
export function connectionAllowance(input: AllowanceInput): number {
  const instances = input.others.length + 1
  const used = input.published + input.others.reduce((a, b) => a + b, 0)
  const free = Math.max(0, input.max - used)
  return input.published + Math.floor(free / instances) + (input.rank < free % instances ? 1 : 0)
}

/**
 * The part of each limit an instance cut off from the others applies: it cannot see what they
 * admit, so it takes its share of the fleet it last saw, never the whole (a partition must not
 * multiply a key's plan) and never nothing (the clients that reach it are still served).
 */
export function shareWhenCutOff(instancesLastSeen: number): number {
  return 1 / Math.max(1, instancesLastSeen)
}

/** A limit scaled by a share, in whole units, at least 1 where the limit is (null: unlimited stays). */
export function scaled(limit: number | null, share: number): number | null {
  if (limit === null || limit === 0 || share >= 1) return limit
  return Math.max(1, Math.floor(limit * share))
}
