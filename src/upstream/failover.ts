import type { Clock } from '../../actors/runtime/clock.js'
import { isUpstreamFailure, UpstreamAnswerTooLarge, UpstreamTimeout, type UpstreamTransportError } from './errors.js'
import type { UpstreamNode } from './node.js'

/**
 * What one call does at each attempt of its failover (see withFailover): how it chooses a node, what
 * it sends, and what it makes of the reply. `C` is a choice of node, `R` a node's reply, `T` the result.
 */
export interface FailoverSteps<C, R, T> {
  /** The next attempt's node among those not tried yet; undefined when none is left. */
  choose(tried: ReadonlySet<UpstreamNode>): C | undefined
  nodeOf(choice: C): UpstreamNode
  /** One attempt on the chosen node, within `timeoutMs` (a policy may wrap it: a hedge). */
  attempt(choice: C, timeoutMs: number): Promise<R>
  /** The call's result from this reply, or undefined to ask another node (the reply judged not good enough). */
  settle(reply: R): T | undefined
  /**
   * The result when the call ends with no reply settled (`no-node`: none left to try; `no-time`: the
   * budget spent), or undefined to throw the last failure. A call that kept a node's answer gives it here.
   */
  ending?(why: 'no-node' | 'no-time'): T | undefined
  /** A failure not to try again on another node (a transaction the node may have received). */
  final?(err: UpstreamTransportError): boolean
  /** The error when no node was there to try at all. */
  noneLeft(): Error
}

/**
 * One call's attempts, node after node, within one budget: a transport failure or a time-out moves
 * to another node while one is left and time remains; each attempt gets min(timeoutMs, what is
 * left). An answer over the size limit is not tried again (another node would send the same
 * answer), nor is any error that is not an upstream failure. The pool's single calls and its
 * upstream batches share this loop; hedging wraps an attempt, consensus replaces the loop.
 * @param opts `deadlineMs`: the whole budget (default 2 × timeoutMs)
 * @param tried nodes passed over from the start (a transaction re-sent elsewhere); each node tried is added
 * @throws the last failure, or `noneLeft()` / UpstreamTimeout when there was none
 * @example
 * const out = await withFailover(clock, { timeoutMs: 5000 }, new Set(), { choose, nodeOf: (n) => n, attempt: (n, ms) => n.call(m, p, ms, {}), settle: (r) => r, noneLeft })
 */
export async function withFailover<C, R, T>(
  clock: Clock,
  opts: { readonly timeoutMs: number; readonly deadlineMs?: number },
  tried: Set<UpstreamNode>,
  steps: FailoverSteps<C, R, T>,
): Promise<T> {
  const deadline = clock.now() + (opts.deadlineMs ?? 2 * opts.timeoutMs)
  let lastFailure: UpstreamTransportError | undefined
  for (;;) {
    const choice = steps.choose(tried)
    if (choice === undefined) {
      const end = steps.ending?.('no-node')
      if (end !== undefined) return end
      throw lastFailure ?? steps.noneLeft()
    }
    const node = steps.nodeOf(choice)
    const left = deadline - clock.now()
    if (left <= 0) {
      const end = steps.ending?.('no-time')
      if (end !== undefined) return end
      throw lastFailure ?? new UpstreamTimeout({ node: node.name, timeoutMs: 0 })
    }
    tried.add(node)
    try {
      const out = steps.settle(await steps.attempt(choice, Math.min(opts.timeoutMs, left)))
      if (out !== undefined) return out
    } catch (err) {
      if (!isUpstreamFailure(err) || err instanceof UpstreamAnswerTooLarge) throw err
      if (steps.final?.(err) === true) throw err
      lastFailure = err
    }
  }
}
