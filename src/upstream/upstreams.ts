import type { Clock } from '../../actors/runtime/clock.js'
import type { NetworkConfig } from '../config/types.js'
import type { NodeKind } from '../events/types.js'
import { ChainCheck, type NodeHealthOptions } from './health.js'
import type { UpstreamTransportError } from './errors.js'
import { UpstreamNode } from './node.js'
import { UpstreamPool } from './pool.js'
import type { WsTransportOptions } from './ws-transport.js'

export interface UpstreamsOptions {
  /** HTTP requests in flight per socket (default 1). */
  pipelining?: number
  /** HTTP sockets per node (default 16). */
  connections?: number
  health?: NodeHealthOptions
  /** How long a method a node lacks is set aside on it (health.methodSetAsideMs). */
  methodSetAsideMs?: number
  ws?: Omit<WsTransportOptions, 'name'>
  clock?: Clock
  /** Largest answer read from a node, in bytes (limits.maxUpstreamBytes; default 32 MiB). */
  maxAnswerBytes?: number
  /** Each failure counted against a node (see UpstreamNodeOptions.onFailure), e.g. to log it. */
  onNodeFailure?: (network: string, node: string, err: UpstreamTransportError, method: string | undefined) => void
  /** The recorder of each node's call durations (for /metrics), asked once per node. */
  durations?: (network: string, node: string, kind: NodeKind) => (method: string, ms: number) => void
}

/** One node's figures for /metrics. */
export interface UpstreamNodeStats {
  network: string
  node: string
  kind: NodeKind
  calls: number
  failures: number
  wsCalls: number
  httpCalls: number
  /** Batches of single calls sent over HTTP (see CallCoalescer), and the calls they carried. */
  coalescedBatches: number
  coalescedCalls: number
  /** Calls may be sent to it now. */
  healthy: boolean
  /** Its WebSocket is open (false when it has none). */
  wsOpen: boolean
  inFlight: number
  /** Blocks behind the best node of the network at the last head poll. */
  lag: number | undefined
  /** Share of failed calls among its last calls. */
  errorRate: number
  /** p95 latency of its recent successful calls in ms (NaN before any). */
  latencyP95Ms: number
  /** The highest head block the node has shown (polls and its eth_blockNumber answers). */
  head: number | undefined
  /** Methods the node said it lacks, set aside now. */
  methodsSetAside: number
  /** Why it is out (failures, error-rate, behind, wrong-chain), undefined while up. */
  outReason: string | undefined
  /** Its eth_chainId at the last check, undefined before it answered one. */
  chainId: number | undefined
}

/**
 * The upstream pools of every network, built from the configuration.
 * @example
 * const upstreams = Upstreams.fromConfig(config.networks, { pipelining: 16 })
 * const reply = await upstreams.pool('eth-1')?.call('full', 'eth_chainId', [], '1', { timeoutMs: 5000 })
 */
export class Upstreams {
  readonly #pools: Map<string, UpstreamPool>
  /** Each configured node's chain check (nodes built elsewhere, e.g. dedicated ones, have none). */
  readonly #chains: ReadonlyMap<UpstreamNode, ChainCheck>

  constructor(pools: Iterable<UpstreamPool>, chains: ReadonlyMap<UpstreamNode, ChainCheck> = new Map()) {
    this.#pools = new Map([...pools].map((pool) => [pool.network, pool]))
    this.#chains = chains
  }

  static fromConfig(networks: Record<string, NetworkConfig>, opts: UpstreamsOptions = {}): Upstreams {
    const pools: UpstreamPool[] = []
    const chains = new Map<UpstreamNode, ChainCheck>()
    for (const [network, config] of Object.entries(networks)) {
      const onNodeFailure = opts.onNodeFailure
      const nodes = config.upstreams.map((u) => {
        const name = u.name ?? new URL(u.url).host
        const chain = new ChainCheck(config.chainId)
        const node = new UpstreamNode({
          name,
          kind: u.kind,
          url: u.url,
          wsUrl: u.ws,
          coalesce: u.coalesce,
          connections: opts.connections,
          pipelining: opts.pipelining,
          health: { ...opts.health, chain, clock: opts.health?.clock ?? opts.clock },
          methodSetAsideMs: opts.methodSetAsideMs,
          ws: opts.ws,
          maxAnswerBytes: opts.maxAnswerBytes,
          onFailure: onNodeFailure && ((err, method) => onNodeFailure(network, name, err, method)),
          onDuration: opts.durations?.(network, name, u.kind),
        })
        chains.set(node, chain)
        return node
      })
      pools.push(new UpstreamPool(network, nodes, { clock: opts.clock }))
    }
    return new Upstreams(pools, chains)
  }

  /** The check of a configured node's chain (the head monitor feeds it), undefined for other nodes. */
  chainOf(node: UpstreamNode): ChainCheck | undefined {
    return this.#chains.get(node)
  }

  /**
   * What an operator must fix that does not make the gateway unready (the other nodes serve):
   * nodes on another chain than their network's, one line each, for the admin listener's /readyz.
   */
  warnings(): string[] {
    const out: string[] = []
    for (const pool of this.#pools.values()) {
      for (const node of pool.nodes()) {
        const chain = this.#chains.get(node)
        if (chain?.wrong)
          out.push(
            `${pool.network} node ${node.name}: out, wrong chain: it answers eth_chainId ${chain.actual}, the network's chainId is ${chain.expected}; fix the node's URL or the network's chainId`,
          )
      }
    }
    return out
  }

  /** The pool of a network slug, undefined for a network not configured. */
  pool(network: string): UpstreamPool | undefined {
    return this.#pools.get(network)
  }

  /** The configured network slugs. */
  networks(): string[] {
    return [...this.#pools.keys()]
  }

  /** Wait (at most `timeoutMs`) until every node's WebSocket is open; false if some is not. */
  async waitForSockets(timeoutMs: number): Promise<boolean> {
    const sockets = [...this.#pools.values()].flatMap((p) => p.nodes()).flatMap((n) => (n.ws ? [n.ws] : []))
    const open = await Promise.all(sockets.map((ws) => ws.waitOpen(timeoutMs)))
    return open.every(Boolean)
  }

  /** Per node: calls, failures, health, for /metrics. */
  stats(): UpstreamNodeStats[] {
    const out: UpstreamNodeStats[] = []
    for (const pool of this.#pools.values()) {
      for (const node of pool.nodes()) {
        out.push({
          network: pool.network,
          node: node.name,
          kind: node.kind,
          ...node.counters,
          coalescedBatches: node.coalesced.batches,
          coalescedCalls: node.coalesced.batchedCalls,
          healthy: node.healthy(),
          wsOpen: node.ws?.isOpen() ?? false,
          inFlight: node.inFlight(),
          lag: node.lag(),
          errorRate: node.errorRate(),
          latencyP95Ms: node.latency.p95(),
          head: node.head,
          methodsSetAside: node.lacking.size,
          outReason: node.outReason(),
          chainId: this.#chains.get(node)?.actual,
        })
      }
    }
    return out
  }

  async close(): Promise<void> {
    await Promise.all([...this.#pools.values()].map((pool) => pool.close()))
  }
}
