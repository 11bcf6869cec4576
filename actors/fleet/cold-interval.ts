/**
 * How often an instance sends its cold reports to the owners, given the fleet's size.
 *
 * Each instance has news for nearly every owner in every interval once its accounts are many, so
 * an owner receives (N − 1) reports per interval: (N − 1)/C a second at C = `fleet.coldReportMs`,
 * 396 at 100 instances and 1,196 at 300 with C = 250 ms, each 50–200 µs of an instance's CPU.
 * Stretching the interval to (N − 1)/M seconds once the fleet is large keeps what an instance
 * receives at M = `fleet.maxReportsPerSecond` reports a second whatever N is. What it costs is the
 * C of the overshoot bound's B (hot-accounts.ts overshootBound): an owner hears of a cold account
 * up to the longer interval late, so B grows by r·(C_eff − C) per other instance serving the key.
 */

/** fleet.maxReportsPerSecond's default: 100 reports a second into each owner, whatever the fleet's size. */
export const MAX_REPORTS_PER_SECOND = 100

export interface ColdIntervalSettings {
  /** fleet.coldReportMs (C): the interval a small fleet keeps. */
  coldReportMs: number
  /** The live instances (N), this one included: each of the N − 1 others reports to an owner once an interval. */
  instances: number
  /** fleet.maxReportsPerSecond (M): at most this many reports a second into an owner (absent: the default). */
  maxReportsPerSecond?: number
}

/**
 * C_eff = max(C, (N − 1)/M s), in milliseconds; not rounded (the sender rounds it to whole syncs).
 * @example
 * coldIntervalMs({ coldReportMs: 250, instances: 10 }) // 250: 9 others at 250 ms are 36 a second
 * coldIntervalMs({ coldReportMs: 250, instances: 101 }) // 1000: 100 others, 100 a second
 * coldIntervalMs({ coldReportMs: 250, instances: 301, maxReportsPerSecond: 200 }) // 1500
 */
export function coldIntervalMs(s: ColdIntervalSettings): number {
  const m = s.maxReportsPerSecond ?? MAX_REPORTS_PER_SECOND
  const others = Math.max(0, s.instances - 1)
  return Math.max(s.coldReportMs, (others * 1_000) / m)
}
