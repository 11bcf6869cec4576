import type { KeyContext } from './key-directory.js'
import { HeavyCallsBusy } from './errors.js'

/** What a refused heavy call is told to wait before trying again, in seconds (the Retry-After header). */
export const HEAVY_RETRY_AFTER_S = 1

/** One call's way through its key's bound: run its upstream part as one of the heavy calls at once. */
export interface HeavySlot {
  run<T>(send: () => Promise<T>): Promise<T>
}

export interface HeavyCallsOptions {
  /** Heavy calls a key may have running at once when its plan says nothing (heavy.atOnce). */
  atOnce: number
  /** How long the next heavy call waits for one of them to finish before it is refused (heavy.atOnceWaitMs). */
  waitMs: number
}

interface AccountCalls {
  running: number
  /** Calls waiting for a slot, oldest first: a slot that frees goes to the oldest. */
  waiting: Array<{ go: () => void }>
}

/**
 * How many heavy calls (the method table's `heavy`: traces, debug_trace*, eth_getLogs,
 * eth_getBlockReceipts…) each key has being sent to a node from this instance, bounded per key:
 * a node's few workers must not all be taken by one tenant's traces while another's reads wait
 * behind them in the node's queue. Keyed by account, as the rate limits are (the keys of one
 * account share one bound). The next heavy call waits up to `waitMs` for a slot, oldest first,
 * then fails with HeavyCallsBusy (429 with Retry-After). Only calls that go to a node take a slot:
 * the upstream caller asks for one after the cache and in-flight sharing had their turn.
 * Entries exist only while an account has heavy calls running or waiting.
 * @example
 * const slot = heavy.slotFor(key) // undefined: no bound (a plan with heavyCallsAtOnce null)
 * const answer = slot ? await slot.run(() => pool.call(...)) : await pool.call(...)
 */
export class HeavyCalls {
  readonly #opts: HeavyCallsOptions
  readonly #accounts = new Map<string, AccountCalls>()
  /**
   * Heavy calls running now per plan id (the tollgate_heavy_calls_running gauge). A plan seen once
   * stays at 0 rather than vanish from the gauge; plan ids come from the catalog, so it stays small.
   */
  readonly #byPlan = new Map<string, number>()

  constructor(opts: HeavyCallsOptions) {
    this.#opts = opts
  }

  /** The slot of a heavy call of this key: its plan's bound, else the default; undefined when the plan sets none (null). */
  slotFor(key: KeyContext): HeavySlot | undefined {
    const own = key.plan?.limits.heavyCallsAtOnce
    if (own === null) return undefined
    const max = own ?? this.#opts.atOnce
    const accountId = key.account.accountId
    const plan = key.plan?.id ?? 'none'
    return { run: (send) => this.#run(accountId, plan, max, send) }
  }

  /** Heavy calls running now, per plan id. */
  runningByPlan(): ReadonlyMap<string, number> {
    return this.#byPlan
  }

  async #run<T>(accountId: string, plan: string, max: number, send: () => Promise<T>): Promise<T> {
    await this.#acquire(accountId, max)
    this.#byPlan.set(plan, (this.#byPlan.get(plan) ?? 0) + 1)
    try {
      return await send()
    } finally {
      this.#byPlan.set(plan, this.#byPlan.get(plan)! - 1)
      this.#release(accountId)
    }
  }

  #acquire(accountId: string, max: number): Promise<void> | undefined {
    let calls = this.#accounts.get(accountId)
    if (calls === undefined) this.#accounts.set(accountId, (calls = { running: 0, waiting: [] }))
    if (calls.running < max) {
      calls.running++
      return undefined
    }
    const waitMs = this.#opts.waitMs
    const account = calls
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        go: () => {
          clearTimeout(timer)
          resolve()
        },
      }
      const timer = setTimeout(() => {
        const i = account.waiting.indexOf(waiter)
        if (i >= 0) account.waiting.splice(i, 1)
        reject(new HeavyCallsBusy(max, waitMs))
      }, waitMs)
      account.waiting.push(waiter)
    })
  }

  #release(accountId: string): void {
    const calls = this.#accounts.get(accountId)
    if (calls === undefined) return
    const next = calls.waiting.shift()
    // The slot passes to the oldest waiting call: `running` stays as it is.
    if (next !== undefined) return next.go()
    if (--calls.running === 0) this.#accounts.delete(accountId)
  }
}
