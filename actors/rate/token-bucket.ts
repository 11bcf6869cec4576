/**
 * Token buckets as plain values and pure functions: the actor keeps the value, time comes in
 * as an argument, and nothing here reads a clock.
 */

/** `tokens` available at time `at` (ms since epoch). May be negative: see `take`. */
export interface TokenBucket {
  readonly tokens: number
  readonly at: number
}

export interface TakeResult {
  bucket: TokenBucket
  ok: boolean
  /** When not ok: ms until the call could be admitted. 0 when ok. */
  retryAfterMs: number
  /** Whole tokens left after this take (never below 0); Infinity when unlimited. */
  remaining: number
  /** ms until the bucket is full again; 0 when unlimited. */
  resetMs: number
}

// Refill arithmetic in floating point can land a hair below a whole token (0.9999999999)
// exactly when a retryAfterMs said it would be there; without this slack a client that waits
// exactly as long as told would be refused once more.
const EPSILON = 1e-9

/** A bucket holding `burst` tokens at `now`. */
export function fullBucket(burst: number, now: number): TokenBucket {
  return { tokens: burst, at: now }
}

/** The bucket refilled to `now` at `ratePerSec`, never above `burst`. */
export function refill(bucket: TokenBucket, ratePerSec: number, burst: number, now: number): TokenBucket {
  // A clock that steps back (NTP) must not drain the bucket: elapsed time is never negative.
  const elapsed = Math.max(0, now - bucket.at)
  const tokens = Math.min(burst, bucket.tokens + (elapsed * ratePerSec) / 1000)
  return { tokens, at: Math.max(now, bucket.at) }
}

/**
 * Take `cost` tokens at `now`. `ratePerSec` null means unlimited (always ok, bucket unchanged).
 *
 * A cost larger than `burst` (a batch bigger than one second of the limit) could never be
 * covered by the tokens a bucket can hold, so refusing it until it fits would refuse it
 * forever. Instead it is admitted when the bucket is full and the bucket goes into debt
 * (negative tokens): the caller then waits until the debt is paid back, so the average rate
 * still holds.
 *
 * @example
 * const r = take(fullBucket(500, now), 1, 500, 500, now) // r.ok, r.remaining === 499
 */
export function take(bucket: TokenBucket, cost: number, ratePerSec: number | null, burst: number, now: number): TakeResult {
  if (ratePerSec === null) {
    return { bucket, ok: true, retryAfterMs: 0, remaining: Number.POSITIVE_INFINITY, resetMs: 0 }
  }
  const current = refill(bucket, ratePerSec, burst, now)
  // What must be in the bucket: the cost, or a full bucket for a cost beyond the burst.
  const needed = Math.min(cost, burst)
  if (current.tokens + EPSILON >= needed) {
    const after = { tokens: current.tokens - cost, at: current.at }
    return {
      bucket: after,
      ok: true,
      retryAfterMs: 0,
      remaining: Math.max(0, Math.floor(after.tokens + EPSILON)),
      resetMs: msToRefill(burst - after.tokens, ratePerSec),
    }
  }
  return {
    bucket: current,
    ok: false,
    retryAfterMs: msToRefill(needed - current.tokens, ratePerSec),
    remaining: Math.max(0, Math.floor(current.tokens + EPSILON)),
    resetMs: msToRefill(burst - current.tokens, ratePerSec),
  }
}

/** ms until `missing` tokens have been refilled (Infinity at rate 0: they never will be). */
function msToRefill(missing: number, ratePerSec: number): number {
  if (missing <= EPSILON) return 0
  if (ratePerSec <= 0) return Number.POSITIVE_INFINITY
  return Math.ceil((missing * 1000) / ratePerSec - EPSILON)
}
