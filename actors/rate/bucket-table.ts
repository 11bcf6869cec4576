import { fullBucket, refill, take, type TakeResult, type TokenBucket } from './token-bucket.js'

/** A limit of one kind of work per client: `burst` at once, then one more every `everyMs`. */
export interface BucketLimit {
  burst: number
  everyMs: number
}

export interface BucketTableOptions {
  /**
   * Most clients remembered at once. Past it the least recently seen client is forgotten: it
   * comes back with a full bucket, so the bound can only loosen a limit, never refuse anyone more.
   */
  maxEntries: number
  /** How often `take` forgets the clients whose bucket is full again (they carry no information). */
  sweepEveryMs?: number
}

const DEFAULT_SWEEP_EVERY_MS = 60_000

/**
 * One token bucket per client (an IP address, an account) for one limit, in a Map of bounded
 * size. Time comes in as an argument; nothing here reads a clock.
 *
 * A client absent from the table has a full bucket: so a bucket that refilled to full is
 * dropped by the periodic sweep with no change in behaviour, and the table holds only the
 * clients that used the limit within its refill time. The Map's order is the order of last use
 * (a use moves the client to the end, a refused one too: a client hammering a limit must not be
 * the first forgotten), so eviction at `maxEntries` takes the least recently seen.
 * @example
 * const signIns = new BucketTable({ burst: 10, everyMs: 6_000 }, { maxEntries: 20_000 })
 * const r = signIns.take('203.0.113.7', Date.now()) // r.ok, else r.retryAfterMs
 */
export class BucketTable {
  readonly limit: BucketLimit
  readonly #ratePerSec: number
  readonly #maxEntries: number
  readonly #sweepEveryMs: number
  readonly #entries = new Map<string, TokenBucket>()
  #lastSweep = Number.NEGATIVE_INFINITY

  constructor(limit: BucketLimit, options: BucketTableOptions) {
    if (!(limit.burst >= 1) || !(limit.everyMs >= 1)) throw new RangeError(`a limit needs burst >= 1 and everyMs >= 1, got ${JSON.stringify(limit)}`)
    if (!(options.maxEntries >= 1)) throw new RangeError(`maxEntries must be >= 1, got ${options.maxEntries}`)
    this.limit = { burst: limit.burst, everyMs: limit.everyMs }
    this.#ratePerSec = 1000 / limit.everyMs
    this.#maxEntries = options.maxEntries
    this.#sweepEveryMs = options.sweepEveryMs ?? DEFAULT_SWEEP_EVERY_MS
  }

  /** Clients remembered now (at most maxEntries). */
  get size(): number {
    return this.#entries.size
  }

  /** Take `cost` tokens of `key`'s bucket at `now`: ok, or refused with retryAfterMs. */
  take(key: string, now: number, cost = 1): TakeResult {
    if (now - this.#lastSweep >= this.#sweepEveryMs) this.sweep(now)
    const current = this.#entries.get(key)
    const result = take(current ?? fullBucket(this.limit.burst, now), cost, this.#ratePerSec, this.limit.burst, now)
    if (current !== undefined) this.#entries.delete(key)
    else if (this.#entries.size >= this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!)
    this.#entries.set(key, result.bucket)
    return result
  }

  /** What `take` would answer, without taking anything. */
  peek(key: string, now: number, cost = 1): TakeResult {
    const current = this.#entries.get(key)
    return take(current ?? fullBucket(this.limit.burst, now), cost, this.#ratePerSec, this.limit.burst, now)
  }

  /** Forget the clients whose bucket is full again at `now`; returns how many. */
  sweep(now: number): number {
    this.#lastSweep = now
    let forgotten = 0
    for (const [key, bucket] of this.#entries) {
      // The refill arithmetic can land a hair below a whole token: such a bucket is full.
      if (refill(bucket, this.#ratePerSec, this.limit.burst, now).tokens + 1e-9 >= this.limit.burst) {
        this.#entries.delete(key)
        forgotten++
      }
    }
    return forgotten
  }
}
