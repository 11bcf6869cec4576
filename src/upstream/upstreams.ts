import type { Clock } from '../../actors/runtime/clock.js'
import type { NetworkConfig, UpstreamConfig } from '../config/types.js'
import type { NodeKind } from '../core/node-kind.js'
import { ChainCheck, type NodeHealthOptions } from './health.js'
import type { UpstreamTransportError } from './errors.js'
import { UpstreamNode } from './node.js'
import { UpstreamPool } from './pool.js'
import { NodeCapacity, type CapacityCounters } from './node-capacity.js'
import { CONSENSUS_DEFAULTS, DEFAULT_CONSENSUS_METHODS, type ConsensusPolicy } from './consensus.js'
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
  /** Instances sharing the nodes now (the fleet's live members, workers included): each takes its share of maxInFlight. */
  instances?: () => number
  /** Longest a call waits for a slot of a node with maxInFlight (limits.capacityWaitMs; default 1000). */
  capacityWaitMs?: number
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
  /**
   * It is up and takes calls (see NodeHealth.up). A node that is out and being probed is not: its
   * probe is `halfOpen`, so that the gauge an alert reads does not flicker back to 1 at each probe.
   */
  healthy: boolean
  /** Out, its cooldown over: the next call probes it, or a probe is in flight. */
  halfOpen: boolean
  /** Calls that probed it while it was out, since start. */
  probes: number
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
  /** Answers it gave against a consensus agreement, and the sit-outs they caused. */
  disputes: number
  sitOuts: number
  /** Its capacity (upstreams[].maxInFlight), when it has one: this instance's slots, calls waiting, waits. */
  capacity: (CapacityCounters & { slots: number; waiting: number; byPlan: ReadonlyMap<string, CapacityCounters> }) | undefined
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
  readonly #chains: Map<UpstreamNode, ChainCheck>
  /** What each configured node was built from (see nodeRecipe): a reload keeps a node whose recipe is the same. */
  readonly #recipes = new Map<UpstreamNode, string>()
  /** The consensus section of the config each network's pool was last given (to tell a reload's change of it). */
  readonly #consensusConfigs = new Map<string, unknown>()
  #opts: UpstreamsOptions
  /** Dropped nodes waiting for their calls to end (closed with the rest at shutdown). */
  readonly #retiring = new Set<UpstreamNode>()

  constructor(pools: Iterable<UpstreamPool>, chains: Map<UpstreamNode, ChainCheck> = new Map(), opts: UpstreamsOptions = {}) {
    this.#pools = new Map([...pools].map((pool) => [pool.network, pool]))
    this.#chains = chains
    this.#opts = opts
  }

  static fromConfig(networks: Record<string, NetworkConfig>, opts: UpstreamsOptions = {}): Upstreams {
    const upstreams = new Upstreams([], new Map(), opts)
    upstreams.apply({ networks, options: opts })
    return upstreams
  }

  /**
   * Serve these networks with these nodes from now on (at start, and at each reload). A node whose
   * settings are the same as before is kept as it is (its sockets, health, latency and
   * subscriptions); a new or changed one is built. Pools of the networks that stay are the same
   * objects, given their new nodes (see UpstreamPool.apply). The nodes dropped are returned,
   * still open: the caller moves their subscriptions, then hands them to retire().
   */
  apply(next: { networks: Record<string, NetworkConfig>; options: UpstreamsOptions }): UpstreamsChange {
    const { networks, options: opts } = next
    this.#opts = opts
    const change: UpstreamsChange = { networksAdded: [], networksRemoved: [], nodes: [], dropped: [], built: [] }
    for (const [network, config] of Object.entries(networks)) {
      const pool = this.#pools.get(network)
      const before = new Map((pool?.nodes() ?? []).map((n) => [n.name, n]))
      const added: string[] = []
      const changed: string[] = []
      const nodes = config.upstreams.map((u) => {
        const name = u.name ?? new URL(u.url).host
        const recipe = nodeRecipe(u, config.chainId, opts)
        const old = before.get(name)
        if (old !== undefined && this.#recipes.get(old) === recipe) {
          before.delete(name)
          old.retune(opts.health ?? {}, opts.methodSetAsideMs)
          return old
        }
        ;(old === undefined ? added : changed).push(name)
        const node = this.#build(network, config.chainId, name, u)
        this.#recipes.set(node, recipe)
        change.built.push({ network, node })
        return node
      })
      // Changed nodes were built anew: the old ones go as dropped, but are told as changed.
      const removed = [...before.keys()].filter((name) => !changed.includes(name))
      change.dropped.push(...before.values())
      const consensus = consensusPolicy(config.consensus)
      if (pool === undefined) {
        this.#pools.set(
          network,
          new UpstreamPool(network, nodes, {
            clock: opts.clock,
            consensus,
            verify: config.verify,
            chainId: config.chainId,
            verifyCheckpoint: config.verifyCheckpoint,
          }),
        )
        change.networksAdded.push(network)
      } else {
        pool.apply({ nodes, consensus, verify: config.verify, chainId: config.chainId, verifyCheckpoint: config.verifyCheckpoint })
        const consensusChanged = JSON.stringify(this.#consensusConfigs.get(network)) !== JSON.stringify(config.consensus)
        if (added.length + removed.length + changed.length > 0 || consensusChanged) {
          change.nodes.push({ network, added, removed, changed, ...(consensusChanged ? { consensus: true } : {}) })
        }
      }
      this.#consensusConfigs.set(network, config.consensus)
    }
    for (const [network, pool] of this.#pools) {
      if (Object.hasOwn(networks, network)) continue
      this.#pools.delete(network)
      this.#consensusConfigs.delete(network)
      change.networksRemoved.push(network)
      change.dropped.push(...pool.nodes())
    }
    return change
  }

  /**
   * Close nodes a reload dropped, each once its calls in flight have ended (and its queued calls
   * have gone), so that no call is cut by a reload. Their chain checks go at once: the head
   * monitor no longer polls them.
   */
  retire(nodes: readonly UpstreamNode[]): void {
    for (const node of nodes) {
      this.#chains.delete(node)
      this.#recipes.delete(node)
      this.#retiring.add(node)
      void whenIdle(node).then(() => {
        if (this.#retiring.delete(node)) return node.close()
      })
    }
  }

  #build(network: string, chainId: number, name: string, u: UpstreamConfig): UpstreamNode {
    const opts = this.#opts
    const onNodeFailure = opts.onNodeFailure
    const chain = new ChainCheck(chainId)
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
      capacity:
        u.maxInFlight === undefined
          ? undefined
          : new NodeCapacity({ maxInFlight: u.maxInFlight, waitMs: opts.capacityWaitMs ?? 1_000, instances: opts.instances ?? (() => 1), node: name }),
    })
    this.#chains.set(node, chain)
    return node
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
          healthy: node.up(),
          halfOpen: node.halfOpen(),
          probes: node.probes(),
          wsOpen: node.ws?.isOpen() ?? false,
          inFlight: node.inFlight(),
          lag: node.lag(),
          errorRate: node.errorRate(),
          latencyP95Ms: node.latency.p95(),
          head: node.head,
          methodsSetAside: node.lacking.size,
          outReason: node.outReason(),
          chainId: this.#chains.get(node)?.actual,
          ...pool.disputesOf(node),
          capacity: node.capacity && {
            ...node.capacity.counters,
            slots: node.capacity.limit(),
            waiting: node.capacity.waiting,
            byPlan: node.capacity.byPlan,
          },
        })
      }
    }
    return out
  }

  async close(): Promise<void> {
    const retiring = [...this.#retiring]
    this.#retiring.clear()
    await Promise.all([...[...this.#pools.values()].map((pool) => pool.close()), ...retiring.map((n) => n.close())])
  }
}

/** What an apply changed: for the reload's log line, and the nodes to move away from and retire. */
export interface UpstreamsChange {
  networksAdded: string[]
  networksRemoved: string[]
  /** Networks that stay, with the nodes added, removed, and changed (built anew), and whether their consensus changed. */
  nodes: { network: string; added: string[]; removed: string[]; changed: string[]; consensus?: true }[]
  /** Nodes no pool has any more (removed, replaced, or of a removed network), still open. */
  dropped: UpstreamNode[]
  /** Nodes built by this apply, by network (the head monitor follows them). */
  built: { network: string; node: UpstreamNode }[]
}

/**
 * Everything a node is built from, as one string: a reload keeps a node whose recipe is the same,
 * and builds anew one whose recipe changed. The health bounds are not in it: they are retuned in
 * place (see UpstreamNode.retune), so that changing them moves no subscription.
 */
function nodeRecipe(u: UpstreamConfig, chainId: number, opts: UpstreamsOptions): string {
  return JSON.stringify([u.url, u.ws, u.kind, u.coalesce, u.maxInFlight, chainId, opts.maxAnswerBytes, opts.capacityWaitMs])
}

/** A retired node that never quiets down (a call stuck past every time-out) is closed after this. */
const RETIRE_MAX_MS = 10 * 60_000
/** How often a retired node is looked at: off the call path, so a timer rather than a hook per call. */
const RETIRE_CHECK_MS = 100

/** Resolves once the node has no call in flight nor waiting for a slot (or RETIRE_MAX_MS passed). */
function whenIdle(node: UpstreamNode): Promise<void> {
  const until = Date.now() + RETIRE_MAX_MS
  return new Promise((resolve) => {
    const check = (): void => {
      if ((node.inFlight() === 0 && (node.capacity?.waiting ?? 0) === 0) || Date.now() > until) return resolve()
      setTimeout(check, RETIRE_CHECK_MS).unref()
    }
    check()
  })
}

/** A network's consensus settings with the defaults filled in; undefined when it asks for none. */
function consensusPolicy(config: NetworkConfig['consensus']): ConsensusPolicy | undefined {
  if (config === undefined) return undefined
  return {
    participants: config.participants,
    agreement: config.agreement,
    methods: new Set(config.methods ?? DEFAULT_CONSENSUS_METHODS),
    disputeWindowMs: config.disputeWindowMs ?? CONSENSUS_DEFAULTS.disputeWindowMs,
    disputeThreshold: config.disputeThreshold ?? CONSENSUS_DEFAULTS.disputeThreshold,
    sitOutMs: config.sitOutMs ?? CONSENSUS_DEFAULTS.sitOutMs,
  }
}
