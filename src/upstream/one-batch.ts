import type { Clock } from '../../actors/runtime/clock.js'
import type { Answer } from './answer.js'
import { withFailover } from './failover.js'
import type { CallFor } from './node-capacity.js'
import type { UpstreamNode } from './node.js'

/** One call of a client batch sent upstream as it is. */
export interface BatchedCall {
  readonly method: string
  readonly params: unknown
  readonly paramsJson?: string
  /** The client's id as JSON text. */
  readonly idJson: string
}

/** What sending a batch needs of its pool. */
export interface OneBatchDeps {
  /** Methods sent on their own with call(), never in a batch. */
  alone(method: string): boolean
  clock: Clock
  /** The node for the next attempt, among those not tried yet (undefined: none left). */
  choose(tried: ReadonlySet<UpstreamNode>): UpstreamNode | undefined
  /** The error when no node was there to try at all. */
  noneLeft(): Error
}

/**
 * Several calls to ONE node as a JSON-RPC batch (one frame or one request instead of one per
 * call), failing over to another node of the kind as a single call does (withFailover). Each answer has the
 * client's id spliced in. A call comes back undefined when the caller must send it on its own with
 * the pool's call(): methods that must go alone (not safe to repeat, so that their failover rules
 * stay those of call(); checked by consensus), and calls the node's answer did not cover.
 * @throws the pool's NoHealthyUpstream / UpstreamTimeout / UpstreamTransportError, for the whole batch
 */
export async function sendAsOneBatch(
  calls: ReadonlyArray<BatchedCall>,
  opts: { timeoutMs: number; deadlineMs?: number; account?: CallFor },
  deps: OneBatchDeps,
): Promise<Array<Answer | undefined>> {
  const out = new Array<Answer | undefined>(calls.length)
  // Identical calls of a client batch were merged by the dispatcher (the one place that decides
  // which calls are alike): what comes here is sent as it is, but for what must go alone.
  // index: where each sent call stands in `calls`; undefined when every call is sent.
  const index = calls.some((c) => deps.alone(c.method)) ? calls.flatMap((c, i) => (deps.alone(c.method) ? [] : [i])) : undefined
  const sent = index === undefined ? calls : index.map((i) => calls[i])
  if (sent.length === 0) return out
  return withFailover(deps.clock, opts, new Set<UpstreamNode>(), {
    choose: deps.choose,
    nodeOf: (node) => node,
    attempt: (node, timeoutMs) => node.callBatch(sent, timeoutMs, opts.account),
    settle: (replies) => {
      for (let k = 0; k < replies.length; k++) {
        const r = replies[k]
        if (r !== undefined) out[index === undefined ? k : index[k]] = r.withId(sent[k].idJson)
      }
      return out
    },
    noneLeft: deps.noneLeft,
  })
}
