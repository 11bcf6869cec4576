import type { StoredEvent } from '../events/types.js'

/**
 * A following projector's batches of usage alone, held until `usageCommitMs` after its last commit
 * (default USAGE_COMMIT_MS) instead of committed as they come.
 *
 * Why: every instance projects the usage of every instance, one UsageRecorded per key, instance and
 * `usage.intervalMs`, arriving as each instance's outbox flushes. Committed as it came, that was a
 * transaction for every flush of every instance, each with a cost of its own (the commit writes
 * every page the batch dirtied, and an account's rows were written again for each instance's report
 * of the same interval). Held for an interval, the reports of one interval go in one transaction,
 * an account's rows written once for all of them. Usage is read by people (the dashboard, `tollgate
 * usage`), not by the request path, so a second later changes nothing anyone acts on.
 *
 * What is not held: anything else (a key, a plan, a penalty) is applied at once, with what is held
 * before it in the same transaction; so is usage past `limit` events. The follower is never kept
 * waiting: held events count as taken, and a commit of them that fails keeps them held and tries
 * again (a batch applied meanwhile reads what it lacks from the log first, Projector.#applyChunk).
 */
export class UsageHold {
  #events: StoredEvent[] = []
  #timer: NodeJS.Timeout | undefined
  /** No timer is set while stopped: a commit that failed as the projector stopped must not retry on a store being closed. */
  #stopped = false
  readonly #commit: (events: StoredEvent[]) => Promise<void>
  readonly #limit: number

  /** `commit`: applies held events (in seq order); it rejects when they were not applied. */
  constructor(commit: (events: StoredEvent[]) => Promise<void>, limit: number) {
    this.#commit = commit
    this.#limit = limit
  }

  /** Events held now. */
  get size(): number {
    return this.#events.length
  }

  /** Hold `batch`, committed `delayMs` from now unless a batch takes it first; false (nothing held) when it would pass the limit. */
  hold(batch: readonly StoredEvent[], delayMs: number): boolean {
    if (this.#events.length + batch.length > this.#limit) return false
    for (const event of batch) this.#events.push(event)
    this.#schedule(delayMs)
    return true
  }

  /** What is held, in seq order, no longer held: it goes in front of the batch that takes it. */
  take(): StoredEvent[] {
    const events = this.#events
    this.#events = []
    clearTimeout(this.#timer)
    this.#timer = undefined
    return events
  }

  /** No more commits from the timer (the projector stops, and commits what take() gives it). */
  stop(): void {
    this.#stopped = true
    clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /** Commits from the timer again (the projector starts following again). */
  resume(): void {
    this.#stopped = false
  }

  #schedule(delayMs: number): void {
    if (this.#timer !== undefined || this.#stopped) return
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      const events = this.take()
      if (events.length === 0) return
      this.#commit(events).catch(() => {
        // Kept, in front of what came since, for the next batch or the next try.
        this.#events = events.concat(this.#events)
        this.#schedule(RETRY_MS)
      })
    }, delayMs)
    // A command that follows the log must be able to exit without stop(): the log keeps the events.
    this.#timer.unref()
  }
}

/** A failed commit of held usage is tried again after this (the projector reports the failure). */
const RETRY_MS = 1_000
