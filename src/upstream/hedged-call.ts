import type { Answer } from './answer.js'
import { isUpstreamFailure } from './errors.js'
import type { NodeCall, UpstreamNode } from './node.js'
import type { Choice } from './node-choice.js'

/** Latency samples the best node needs before its p95 is trusted for hedging. */
const HEDGE_MIN_SAMPLES = 20

/** Hedges started and won, for /metrics. */
export interface HedgeCounters {
  started: number
  won: number
}

/** What hedging reads of a call. */
export interface HedgedCall extends NodeCall {
  /** Pinned to one node: never hedged. */
  readonly node?: string
  /** A read: it may be hedged, and may be a probe. */
  readonly read?: boolean
  /** Hedging of reads, when on (PoolCall.hedge). */
  readonly hedge?: { minDelayMs: number; maxDelayMs: number }
}

/**
 * Hedged calls of a pool: after a delay without an answer, one more attempt on another healthy
 * node of the kind (the best one for a probe), and the first answer wins; the slower call is left
 * to finish and its answer dropped. A probe of a node outside the best ones is always hedged, so
 * that the client never waits for the node being measured; other reads when `hedge` is on.
 * @example
 * const hedgeMs = hedging.delayFor(choice, call)
 * const answer = hedgeMs === undefined ? await choice.node.call(call, timeoutMs) : await hedging.run(choice, call, timeoutMs, hedgeMs, tried, another)
 */
export class Hedging {
  readonly counters: HedgeCounters = { started: 0, won: 0 }

  /** How long to wait before hedging this attempt (undefined: not hedged): a probe always (to the best node), a read when hedging is on. */
  delayFor(choice: Choice, opts: Pick<HedgedCall, 'node' | 'read' | 'hedge'>): number | undefined {
    if (opts.node !== undefined || opts.read !== true) return undefined
    const best = choice.best.latency
    if (choice.probe) {
      // The client must not wait for the node being measured: the best node's usual time, then it.
      const p95 = best.p95()
      return Number.isNaN(p95) ? undefined : Math.max(1, Math.ceil(p95))
    }
    if (opts.hedge === undefined) return undefined
    // Until the best node's p95 is trusted, the longest wait: a read on a hung node is hedged all
    // the same. (A node that became best on a few probes got no hedge at all before: a read on it,
    // hung, waited for the whole time-out.)
    if (best.count < HEDGE_MIN_SAMPLES) return opts.hedge.maxDelayMs
    return Math.min(opts.hedge.maxDelayMs, Math.max(opts.hedge.minDelayMs, Math.ceil(best.p95())))
  }

  /**
   * One attempt on the chosen node, and after `hedgeMs` without an answer one more on `another()`
   * (the best node for a probe): the first answer wins. Rejects with the last failure when both fail.
   * @param tried the call's nodes tried so far; the hedge's node is added to it
   */
  run(
    choice: Choice,
    call: HedgedCall,
    timeoutMs: number,
    hedgeMs: number,
    tried: Set<UpstreamNode>,
    another: () => UpstreamNode | undefined,
  ): Promise<Answer> {
    const first = choice.node
    return new Promise((resolve, reject) => {
      let running = 1
      let settled = false
      const win = (by: UpstreamNode) => (reply: Answer) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        if (by !== first) this.counters.won++
        resolve(reply)
      }
      const lose = (err: unknown) => {
        running--
        if (settled) return
        // A failure of one while the other runs is not the answer: wait for the other.
        if (running > 0 && isUpstreamFailure(err)) return
        settled = true
        clearTimeout(timer)
        reject(err)
      }
      const timer = setTimeout(() => {
        if (settled || hedgeMs >= timeoutMs) return
        const second = choice.probe && !tried.has(choice.best) ? choice.best : another()
        // A hedge is extra load: never one that would wait for a slot of a full node.
        if (second === undefined || !second.hasRoom(call.account)) return
        tried.add(second)
        running++
        this.counters.started++
        second.call(call, timeoutMs - hedgeMs).then(win(second), lose)
      }, hedgeMs)
      first.call(call, timeoutMs).then(win(first), lose)
    })
  }
}
