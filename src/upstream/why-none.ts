import type { UpstreamNode } from './node.js'

/** Why a node takes no call, by UpstreamNode.outReason(), in the words of the 503 message. */
const REASONS: Readonly<Record<string, string>> = {
  failures: 'failing',
  'error-rate': 'failing too often',
  behind: 'behind the other nodes',
  'wrong-chain': 'on another chain',
  disputes: 'sitting out: it answered against the other nodes',
}

/**
 * Each node of a kind and why it takes no call, for the message of NoHealthyUpstream: the client
 * (and the operator reading the log) learns whether to wait, or to fix the configuration.
 * @example
 * whyNoneOf(pool.nodesOf('full')) // 'a: failing, b: behind the other nodes'
 */
export function whyNoneOf(nodes: readonly UpstreamNode[]): string {
  if (nodes.length === 0) return 'none configured'
  return nodes.map((n) => `${n.name}: ${REASONS[n.outReason() ?? ''] ?? 'being probed'}`).join(', ')
}
