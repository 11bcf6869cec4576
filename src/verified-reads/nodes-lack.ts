import type { UpstreamPool } from '../upstream/pool.js'

/**
 * What verification needs of a node and found a node lacks (docs/verified-answers.md, "What each
 * verified method needs of a node"): each is worked around (receipts one by one, proofs and calls
 * asked by number, the run finding what it reads), at a price in node calls, so an operator should
 * see which node makes verified reads dearer, and why.
 */
export type VerifyNeed =
  | 'eth_getBlockReceipts'
  | 'eth_createAccessList'
  | 'eth_getProof by blockHash'
  | 'eth_getCode by blockHash'
  | 'eth_call by blockHash'
  | 'eth_estimateGas by blockHash'

/** The needs each node of one network was found to lack, by node name; for /metrics. */
export class NodesLack {
  readonly #byNode = new Map<string, Set<VerifyNeed>>()

  /** `node` answered an error where `need` was asked of it, and was then asked another way. */
  saw(node: string, need: VerifyNeed): void {
    let needs = this.#byNode.get(node)
    if (needs === undefined) this.#byNode.set(node, (needs = new Set()))
    needs.add(need)
  }

  /** Each node's lacking needs, found since the start (a node upgraded meanwhile keeps its rows until a restart). */
  entries(): IterableIterator<[string, ReadonlySet<VerifyNeed>]> {
    return this.#byNode.entries()
  }
}

/** One record a pool (a network): every verified part that talks to its nodes writes to the same one. */
const byPool = new WeakMap<UpstreamPool, NodesLack>()

/** The record of what `pool`'s nodes were found to lack. */
export function nodesLackOf(pool: UpstreamPool): NodesLack {
  let lack = byPool.get(pool)
  if (lack === undefined) byPool.set(pool, (lack = new NodesLack()))
  return lack
}
