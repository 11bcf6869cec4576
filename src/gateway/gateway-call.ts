import type { MethodSpec } from '../rpc/method-table.js'
import type { PoolCall } from '../upstream/pool-call.js'
import type { UpstreamPool } from '../upstream/pool.js'
import type { HeavySlot } from './heavy-calls.js'

/**
 * One client call as the gateway serves it, built once where the call is routed (RpcDispatcher)
 * and handed as it is through the forwarder, the upstream caller and the pool to the node that
 * answers it: who it is for, what it asks, where it goes and within what time. Every layer reads
 * the fields it needs of this one value (a PoolCall for the pool, a NodeCall for a node); a layer
 * that makes another call of it (an archive retry, a filter call pinned to its node, an
 * eth_getLogs part) copies it with what differs.
 * @example
 * const call = dispatcher.route(ctx, entry) // { method: 'eth_getBalance', kind: 'full', units: 20, timeoutMs: 5000, … }
 * const answer = await pool.call(call)
 */
export interface GatewayCall extends PoolCall {
  readonly network: string
  readonly pool: UpstreamPool
  /** false: a notification (no id member): forwarded and counted, never answered. */
  readonly answered: boolean
  /** Its params as JSON (paramsJson): written once, for the keys that make calls alike and the upstream text. */
  readonly paramsJson: string
  /** The method's rule: the table's entry, or what the network's forwardMethods allows. */
  readonly spec: MethodSpec
  /**
   * The compute units it is charged: its method's cost, times the chunks for an eth_getLogs that
   * is split (src/get-logs/logs-range.ts chunkCount): each chunk is a node call.
   */
  readonly units: number
  /** Answered by the transport's local calls (subscriptions), not by a node. */
  readonly local: boolean
  /** Its place in the client's batch (0 for a call alone). */
  readonly index: number
  /**
   * A heavy call's place among its key's heavy calls at once (src/gateway/heavy-calls.ts): taken
   * only when the call goes to a node, not when the cache answers it or it joins one in flight.
   */
  readonly heavySlot: HeavySlot | undefined
}

/**
 * A call's time budget and how the pool may treat it, by its method (CallSender.budgetOf): its
 * attempt's time-out, its whole budget, heavy or a read that may be hedged. budgetOf writes every
 * field, undefined ones too, so that a copy made for another method replaces all of them.
 */
export type CallBudget = Pick<PoolCall, 'timeoutMs' | 'deadlineMs' | 'heavy' | 'read' | 'hedge'>
