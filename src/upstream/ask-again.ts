import type { Answer } from './answer.js'
import { blockNumberIn, emptyWhenBehind } from './answer-checks.js'
import type { UpstreamNode } from './node.js'
import { highestHead } from './node-choice.js'

/**
 * Whether a node's answer should be asked again of another node: the answer to keep meanwhile, or
 * undefined to give this one to the client. An eth_blockNumber below the highest head a node of
 * the network has shown (the head never goes back); an empty answer (a null block, transaction or
 * receipt, "header not found") from a node behind that head. ("Method not found" is judged by
 * PoolAttempts, with the nodes that lack the method.) The node's head learns from an
 * eth_blockNumber it answered.
 * @param node the node that answered
 * @param kept the answer kept so far in this call, if any
 * @param pool the network's nodes (their heads), read only when an answer may be behind
 * @example
 * const better = askAgain('eth_blockNumber', reply, kept, node, pool) // undefined: give `reply` to the client
 */
export function askAgain(
  method: string,
  reply: Answer,
  kept: Answer | undefined,
  node: UpstreamNode,
  pool: { nodes(): readonly UpstreamNode[] },
): Answer | undefined {
  if (method === 'eth_blockNumber') {
    const n = blockNumberIn(reply)
    if (n === undefined) return undefined
    node.sawHead(n)
    const top = highestHead(pool.nodes())
    if (top === undefined || n >= top) return undefined
    // The highest answer so far is the one kept.
    const keptN = kept === undefined ? undefined : blockNumberIn(kept)
    return keptN !== undefined && keptN >= n ? kept : reply
  }
  if (node.head !== undefined && emptyWhenBehind(method, reply)) {
    const top = highestHead(pool.nodes())
    if (top === undefined || node.head >= top) return undefined
    return kept ?? reply
  }
  return undefined
}
