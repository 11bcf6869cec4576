import { systemClock, type Clock } from '../../actors/runtime/clock.js'
import type { NodeKind } from '../events/types.js'
import { isUpstreamFailure, NoHealthyUpstream, UpstreamTimeout, type UpstreamTransportError } from './errors.js'
import type { UpstreamNode } from './node.js'
import { spliceId } from './splice-id.js'

/** What the pool answers for one call. */
export interface UpstreamReply {
  /** The node's response object text with the CLIENT's id spliced in; every other byte is the node's. */
  body: string
  /** Name of the node that answered. */
  node: string
  kind: NodeKind
  /** The node answered with a JSON-RPC error (returned as the node said it, not a failure). */
  isError: boolean
}

export interface PoolCallOptions {
  /** Time-out of one attempt on one node, in ms. */
  timeoutMs: number
  /**
   * Budget of the whole call in ms, failovers included (default 2 × timeoutMs): after a node
   * times out, another one gets what is left of it. Each attempt gets min(timeoutMs, what is left).
   */
  deadlineMs?: number
  /**
   * Send to this node only, with no failover (a filter lives on the node that created it). It is
   * tried even while marked unhealthy: no other node could answer.
   */
  node?: string
}

/**
 * Methods that must not be sent twice. After a time-out or a reset the first node may have
 * received the transaction and broadcast it; sent again elsewhere, the answer would be
 * "already known" or "nonce too low" in place of the hash, and a client that believes it
 * failed may sign a replacement (a double payment). So these fail over only when we KNOW the
 * first node never got the request (connection refused: requestSent false).
 */
const NOT_SAFE_TO_REPEAT: ReadonlySet<string> = new Set(['eth_sendRawTransaction', 'eth_sendTransaction'])

/**
 * The nodes of one network, by kind: round-robin over the healthy nodes of the asked kind, and
 * failover to another one of the same kind on a transport failure or time-out.
 * @example
 * const reply = await pool.call('full', 'eth_blockNumber', [], '1', { timeoutMs: 5000 })
 * reply.body // '{"jsonrpc":"2.0","id":1,"result":"0x10"}'
 */
export class UpstreamPool {
  readonly network: string
  readonly #byKind: Record<NodeKind, UpstreamNode[]> = { full: [], archive: [] }
  readonly #next: Record<NodeKind, number> = { full: 0, archive: 0 }
  readonly #clock: Clock

  constructor(network: string, nodes: UpstreamNode[], opts: { clock?: Clock } = {}) {
    this.network = network
    for (const node of nodes) this.#byKind[node.kind].push(node)
    this.#clock = opts.clock ?? systemClock
  }

  /** Nodes of this kind are configured (healthy or not). */
  hasKind(kind: NodeKind): boolean {
    return this.#byKind[kind].length > 0
  }

  /** Every node of the pool. */
  nodes(): readonly UpstreamNode[] {
    return [...this.#byKind.full, ...this.#byKind.archive]
  }

  /**
   * Send one call to a healthy node of `kind`, failing over to another one of the same kind
   * when a node fails, and return the node's answer with the client's id spliced in.
   * @param clientIdJson the client's id as JSON text (`1`, `"abc"`, `null`)
   * @throws NoHealthyUpstream no healthy node of the kind to try
   * @throws UpstreamTimeout / UpstreamTransportError every node tried failed (the last failure)
   */
  async call(
    kind: NodeKind,
    method: string,
    params: unknown,
    clientIdJson: string,
    opts: PoolCallOptions,
  ): Promise<UpstreamReply> {
    const deadline = this.#clock.now() + (opts.deadlineMs ?? 2 * opts.timeoutMs)
    const tried = new Set<UpstreamNode>()
    let lastFailure: UpstreamTransportError | undefined
    for (;;) {
      const node = opts.node === undefined ? this.#pick(kind, tried) : this.#named(opts.node, tried)
      if (node === undefined) {
        throw lastFailure ?? new NoHealthyUpstream({ network: this.network, kind })
      }
      const left = deadline - this.#clock.now()
      if (left <= 0) {
        throw lastFailure ?? new UpstreamTimeout({ node: node.name, timeoutMs: 0 })
      }
      tried.add(node)
      try {
        const reply = await node.call(method, params, Math.min(opts.timeoutMs, left))
        return { body: spliceId(reply.text, clientIdJson), node: node.name, kind, isError: reply.isError }
      } catch (err) {
        if (!isUpstreamFailure(err)) throw err
        if (NOT_SAFE_TO_REPEAT.has(method) && err.requestSent) throw err
        lastFailure = err
      }
    }
  }

  /** Nodes of this kind that take calls now. */
  hasHealthy(kind: NodeKind): boolean {
    return this.#byKind[kind].some((node) => node.healthy())
  }

  #named(name: string, tried: ReadonlySet<UpstreamNode>): UpstreamNode | undefined {
    const node = this.nodes().find((n) => n.name === name)
    return node === undefined || tried.has(node) ? undefined : node
  }

  /** The next healthy node of `kind` in round-robin order that this call has not tried yet. */
  #pick(kind: NodeKind, tried: ReadonlySet<UpstreamNode>): UpstreamNode | undefined {
    const nodes = this.#byKind[kind]
    const n = nodes.length
    for (let i = 0; i < n; i++) {
      const index = (this.#next[kind] + i) % n
      const node = nodes[index]
      if (!tried.has(node) && node.healthy()) {
        this.#next[kind] = (index + 1) % n
        return node
      }
    }
    return undefined
  }

  async close(): Promise<void> {
    await Promise.all(this.nodes().map((node) => node.close()))
  }
}
