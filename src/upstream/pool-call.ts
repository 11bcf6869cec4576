import type { NodeKind } from '../core/node-kind.js'
import { METHODS } from '../rpc/method-table.js'
import type { NodeCall } from './node.js'

/**
 * A call as the pool reads it: the node kind it goes to, the client's id, and its time budget and
 * node choice, beside what a node reads (NodeCall). The gateway's GatewayCall is one: the pool and
 * its nodes read the value the dispatcher built, nothing copied per layer.
 */
export interface PoolCall extends NodeCall, PoolCallOptions {
  readonly kind: NodeKind
  /** The client's id as JSON text (`1`, `"abc"`, `null`): spliced into the node's answer. */
  readonly idJson: string
}

/** A pool call's budget and node choice, without the call itself (what the verified reads hand on to the calls their checks make). */
export interface PoolCallOptions {
  /** The account it is for: it takes a slot of a node's capacity (NodeCall.account). */
  readonly account?: NodeCall['account']
  /** A heavy call (NodeCall.heavy): scored and timed apart. */
  readonly heavy?: boolean
  /** Sent alone (NodeCall.alone). */
  readonly alone?: boolean
  /** Time-out of one attempt on one node, in ms. */
  readonly timeoutMs: number
  /**
   * Budget of the whole call in ms, failovers included (default 2 × timeoutMs): after a node
   * times out, another one gets what is left of it. Each attempt gets min(timeoutMs, what is left).
   */
  readonly deadlineMs?: number
  /**
   * Send to this node only, with no failover (a filter lives on the node that created it). It is
   * tried even while marked unhealthy: no other node could answer.
   */
  readonly node?: string
  /** Nodes not to try (a transaction re-sent after a node failed goes elsewhere). */
  readonly avoid?: ReadonlySet<string>
  /**
   * A read: it may be hedged (when `hedge` is given) and may be a probe of a node outside the best
   * ones (always hedged to the best node). Transactions, filter calls and pinned calls are not.
   */
  readonly read?: boolean
  /**
   * Hedging of reads: when the node asked has not answered after the best node's p95 (within
   * these bounds; maxDelayMs until the best node has HEDGE_MIN_SAMPLES), ask another healthy node of
   * the kind too, and take the first answer. The slower call is left to finish; its answer is dropped.
   */
  readonly hedge?: { minDelayMs: number; maxDelayMs: number }
  /** The newest block the call names: nodes whose head is below it are passed over while another reaches it. */
  readonly minBlock?: number
  /** The caller checks the answer itself (src/verified-reads: a proof against a trusted header): no consensus vote. */
  readonly checked?: boolean
}

/** Answers asked again of another node, by why, for /metrics. */
export interface AskedAgainCounters {
  /** An eth_blockNumber below the network's head, or an empty answer from a node behind it. */
  behind: number
  /** A "method not found" from a node while another may serve the method. */
  methodMissing: number
}

/**
 * Whether a method must not be sent twice: a signed transaction (the method table's `path: 'send'`).
 * After a time-out or a reset the first node may have received the transaction and broadcast it;
 * sent again elsewhere, the answer would be "already known" or "nonce too low" in place of the
 * hash, and a client that believes it failed may sign a replacement (a double payment). So these
 * fail over only when we KNOW the first node never got the request (connection refused:
 * requestSent false).
 */
export function notSafeToRepeat(method: string): boolean {
  return Object.hasOwn(METHODS, method) && METHODS[method].path === 'send'
}
