import type { EventBatch } from '../events/event-batch.js'

/**
 * Batches of several logs read in parallel, applied one at a time in step: once every log still
 * read has a batch waiting, the batch whose first event is the oldest is applied, and its log reads
 * on. The usage read models keep windows that move with the newest event time seen over all logs
 * (ids for a minute, hours for weeks): applied log after log, a partition read late would find its
 * hours already dropped. In step, the logs are at most one batch's span of event time apart.
 * Within one log, events are applied in its order, so an account's usage (in one partition) is.
 */
export class BatchMerge {
  readonly #waiting: ({ time: number; apply: () => Promise<void>; settle: (err?: unknown) => void } | undefined)[]
  readonly #done: boolean[]
  #failure: { err: unknown } | undefined
  #running = false

  constructor(logs: number) {
    this.#waiting = new Array(logs).fill(undefined)
    this.#done = new Array(logs).fill(false)
  }

  /** Log `k` has `batch`: resolves once `apply` ran for it (rejects with its error, or another log's). */
  offer(k: number, batch: EventBatch, apply: () => Promise<void>): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure.err)
    let time = Number.POSITIVE_INFINITY
    for (const { event } of batch) {
      time = event.time
      break
    }
    return new Promise((resolve, reject) => {
      this.#waiting[k] = { time, apply, settle: (err) => (err === undefined ? resolve() : reject(err)) }
      this.#next()
    })
  }

  /** Log `k` has nothing more. */
  done(k: number): void {
    this.#done[k] = true
    this.#next()
  }

  /** A log's read failed: every batch waiting is refused with its error (the reads end). */
  fail(err: unknown): void {
    this.#failure ??= { err }
    for (let k = 0; k < this.#waiting.length; k++) {
      const waiting = this.#waiting[k]
      this.#waiting[k] = undefined
      waiting?.settle(this.#failure.err)
    }
  }

  throwIfFailed(): void {
    if (this.#failure !== undefined) throw this.#failure.err
  }

  #next(): void {
    if (this.#running || this.#failure !== undefined) return
    let pick = -1
    for (let k = 0; k < this.#waiting.length; k++) {
      const waiting = this.#waiting[k]
      if (waiting === undefined) {
        if (!this.#done[k]) return // its next batch may be older than every one waiting
        continue
      }
      if (pick === -1 || waiting.time < this.#waiting[pick]!.time) pick = k
    }
    if (pick === -1) return
    const waiting = this.#waiting[pick]!
    this.#waiting[pick] = undefined
    this.#running = true
    waiting.apply().then(
      () => {
        this.#running = false
        waiting.settle()
        this.#next()
      },
      (err: unknown) => {
        this.#running = false
        waiting.settle(err)
        this.fail(err)
      },
    )
  }
}
