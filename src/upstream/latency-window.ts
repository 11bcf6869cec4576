/** Up to this many samples, the percentiles follow every new one. */
const SMALL_WINDOW = 64

/**
 * The latencies of a node's last successful calls, for its p95 (hedging waits that long before
 * asking a second node) and for /metrics. A fixed ring: recording is O(1) and allocation-free on
 * the request path; the percentile is computed when asked, at most once per `recomputeEvery`
 * new samples, so that a hot path asking for it on every call does not sort on every call.
 */
export class LatencyWindow {
  readonly #samples: Float64Array
  #count = 0
  #next = 0
  #sinceSorted = Infinity
  #p95 = Number.NaN
  #p50 = Number.NaN
  readonly #recomputeEvery: number

  constructor(size = 256, recomputeEvery = 16) {
    this.#samples = new Float64Array(size)
    this.#recomputeEvery = recomputeEvery
  }

  record(ms: number): void {
    this.#samples[this.#next] = ms
    this.#next = (this.#next + 1) % this.#samples.length
    if (this.#count < this.#samples.length) this.#count++
    this.#sinceSorted++
  }

  /** Samples held (at most the window size). */
  get count(): number {
    return this.#count
  }

  /** The 95th percentile of the window in ms; NaN with no samples. */
  p95(): number {
    this.#sort()
    return this.#p95
  }

  /** The median of the window in ms; NaN with no samples. */
  p50(): number {
    this.#sort()
    return this.#p50
  }

  #sort(): void {
    // A small window is sorted at each new sample (cheap): a node that only gets the occasional
    // probe must have each probe count, or its first, slow, connection-opening call would be its
    // score until 16 more samples came, which a node passed over never gets.
    if (this.#count === 0 || this.#sinceSorted === 0) return
    if (this.#sinceSorted < this.#recomputeEvery && this.#count >= SMALL_WINDOW) return
    const sorted = this.#samples.slice(0, this.#count).sort()
    this.#p95 = sorted[Math.min(this.#count - 1, Math.ceil(this.#count * 0.95) - 1)]
    this.#p50 = sorted[Math.min(this.#count - 1, Math.ceil(this.#count * 0.5) - 1)]
    this.#sinceSorted = 0
  }
}
