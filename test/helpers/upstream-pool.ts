import { UpstreamNode, type UpstreamNodeOptions } from '../../src/upstream/node.js'
import { UpstreamPool } from '../../src/upstream/pool.js'

/** What closes the nodes and pools a test makes: the test itself (tap's `t`), or the file's root test. */
export interface Teardown {
  teardown(fn: () => unknown): void
}

/** A node as a test writes it: its URL, or its options (name, kind `full`, unless said). */
export type NodeSpec = string | (Partial<UpstreamNodeOptions> & { url: string })

/** The options of a pool: its clock, consensus, verify, chain id and checkpoint; network `eth-1` unless said. */
export type PoolOptions = NonNullable<ConstructorParameters<typeof UpstreamPool>[2]> & { network?: string }

/**
 * One node on a real URL (an anvil, a proxy in front of one), kind `full` and named `a` unless the
 * options say; closed at `t`'s teardown.
 * @example
 * const n = nodeOn(t, anvil.url, { name: 'ws', wsUrl: anvil.wsUrl })
 */
export function nodeOn(t: Teardown, url: string, opts: Partial<UpstreamNodeOptions> = {}): UpstreamNode {
  const node = new UpstreamNode({ name: 'a', kind: 'full', url, ...opts })
  t.teardown(() => node.close())
  return node
}

/**
 * One network's pool (`eth-1`) of the nodes given: URLs and options become nodes named `a`, `b`,
 * ... in their order unless they name themselves; nodes already made (nodeOn) are taken as they
 * are. Closed, with its nodes, at `t`'s teardown (closing a node twice does nothing more).
 * @example
 * const pool = poolOn(t, [refusedUrl, { name: 'good', url: proxy.url }])
 * await pool.call('full', 'eth_chainId', [], '1', { timeoutMs: 5_000 })
 */
export function poolOn(t: Teardown, nodes: ReadonlyArray<NodeSpec | UpstreamNode>, opts: PoolOptions = {}): UpstreamPool {
  const { network = 'eth-1', ...poolOpts } = opts
  const made = nodes.map((n, i) => {
    if (n instanceof UpstreamNode) return n
    const spec = typeof n === 'string' ? { url: n } : n
    return new UpstreamNode({ name: String.fromCharCode(97 + i), kind: 'full', ...spec })
  })
  const pool = new UpstreamPool(network, made, poolOpts)
  t.teardown(() => pool.close())
  return pool
}

/**
 * The same node reached two ways, each its own pool of one: `pools.http` (HTTP only, node
 * `http-only`) and `pools.ws` (its WebSocket while open, node `ws`), for tests that want the same
 * answer over both transports. `wsOpened`: the node's WebSocket opened within 5 s.
 */
export async function httpAndWsPools(
  t: Teardown,
  node: { url: string; wsUrl: string },
  kind: UpstreamNodeOptions['kind'] = 'full',
): Promise<{ pools: { http: UpstreamPool; ws: UpstreamPool }; httpNode: UpstreamNode; wsNode: UpstreamNode; wsOpened: boolean }> {
  const httpNode = new UpstreamNode({ name: 'http-only', kind, url: node.url })
  const wsNode = new UpstreamNode({ name: 'ws', kind, url: node.url, wsUrl: node.wsUrl })
  const pools = { http: poolOn(t, [httpNode]), ws: poolOn(t, [wsNode]) }
  const wsOpened = await wsNode.ws!.waitOpen(5_000)
  return { pools, httpNode, wsNode, wsOpened }
}
