import type { StoredEvent } from './types.js'

/** First and longest pause before delivering a rejected batch again. */
const RETRY_FIRST_MS = 100
const RETRY_MAX_MS = 5_000

/** The pause after `failures` failures in a row (1, 2, …): doubling from RETRY_FIRST_MS up to RETRY_MAX_MS, so a failing projection never spins. */
export function retryPauseMs(failures: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** (failures - 1))
}

export interface FollowLoopOptions {
  /** First seq to deliver. */
  from: number
  onBatch: (batch: StoredEvent[]) => Promise<void>
  /** The next events from `next` on (empty when caught up). */
  read: (next: number) => Promise<StoredEvent[]>
  /** How long to wait for a wake() when caught up before reading again. */
  idleWaitMs: number
  /** Told about read and onBatch failures (the loop keeps going). */
  onError?: (err: unknown) => void
}

/**
 * A follower driven by reads: read from `next`, hand the batch over, wait for it to settle,
 * move on; when caught up, sleep until woken (an append in this process) or `idleWaitMs`
 * passes (appends by others). A rejected batch, or a failed read, is retried with backoff, so
 * a projection that fails to commit never skips events.
 */
export class FollowLoop implements Follower {
  readonly #opts: FollowLoopOptions
  #next: number
  #stopped = false
  #done: Promise<void> = Promise.resolve()
  /** Ends the current sleep; `force` also ends a retry backoff (on stop). */
  #wake: ((force: boolean) => void) | undefined
  /** A wake() that came while reading: the next sleep must not wait for the idle time-out. */
  #woken = false

  constructor(opts: FollowLoopOptions) {
    this.#opts = opts
    this.#next = Math.max(1, opts.from)
  }

  start(): void {
    this.#done = this.#run()
  }

  /** Read again now instead of at the end of the idle wait. */
  wake(): void {
    this.#woken = true
    this.#wake?.(false)
  }

  /** Stop after the batch in progress settles; resolves when the loop has ended. */
  async stop(): Promise<void> {
    this.#stopped = true
    this.#wake?.(true)
    await this.#done
  }

  async #run(): Promise<void> {
    let failures = 0
    while (!this.#stopped) {
      try {
        const batch = await this.#opts.read(this.#next)
        if (this.#stopped) break
        if (batch.length === 0) {
          await this.#sleep(this.#opts.idleWaitMs, true)
          continue
        }
        await this.#opts.onBatch(batch)
        this.#next = batch[batch.length - 1].seq + 1
        failures = 0
      } catch (err) {
        this.#opts.onError?.(err)
        failures += 1
        // Not cut short by appends: a failing projection must not spin at the append rate.
        await this.#sleep(retryPauseMs(failures), false)
      }
    }
  }

  #sleep(ms: number, wakeable: boolean): Promise<void> {
    if (this.#stopped || (wakeable && this.#woken)) {
      this.#woken = false
      return Promise.resolve()
    }
    return new Promise((resolve) => {
      const done = (force = true): void => {
        if (!force && !wakeable) return
        clearTimeout(timer)
        this.#wake = undefined
        this.#woken = false
        resolve()
      }
      const timer = setTimeout(() => done(), ms)
      this.#wake = done
    })
  }
}

/** What a log's followers have in common: the read loop here, the JetStream log's StreamFollower. */
export interface Follower {
  start(): void
  /** New events may be there that the follower was not told of: look now. */
  wake(): void
  stop(): Promise<void>
}

/** The running followers of one log: started, woken together, and stopped with it. */
export class FollowerSet {
  readonly #loops = new Set<Follower>()

  /** Start `loop` and hand back the LogFollower that stops it. */
  start(loop: Follower): { stop(): Promise<void> } {
    this.#loops.add(loop)
    loop.start()
    return {
      stop: async () => {
        this.#loops.delete(loop)
        await loop.stop()
      },
    }
  }

  /** Followers running. */
  get size(): number {
    return this.#loops.size
  }

  /** New events may be there: every follower looks now instead of at its next poll. */
  wakeAll(): void {
    for (const loop of this.#loops) loop.wake()
  }

  async stopAll(): Promise<void> {
    const loops = [...this.#loops]
    this.#loops.clear()
    await Promise.all(loops.map((loop) => loop.stop()))
  }
}
