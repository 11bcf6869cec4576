import type { NodeKind } from '../core/node-kind.js'
import type { CallFor } from '../upstream/node-capacity.js'
import type { UpstreamPool } from '../upstream/pool.js'
import type { HeavySlot } from './heavy-calls.js'

/** One call routed to a node kind, on its way upstream. */
export interface UpstreamCall {
  readonly network: string
  readonly pool: UpstreamPool
  readonly kind: NodeKind
  readonly method: string
  readonly params: unknown
  /** The client's id as JSON text. */
  readonly idJson: string
  /** Pinned to this node (a filter lives there): sent as is, never shared nor cached. */
  readonly node?: string
  /** The newest block the call names, when it names one: it goes to a node whose head reaches it. */
  readonly minBlock?: number
  /** The account it is for: its turn on nodes with a capacity (PoolCallOptions.account). */
  readonly account?: CallFor
  /**
   * A heavy call's place among its key's heavy calls at once (src/gateway/heavy-calls.ts): taken
   * only when the call goes to a node, not when the cache answers it or it joins one in flight.
   */
  readonly heavy?: HeavySlot
}
