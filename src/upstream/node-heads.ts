import type { Upstreams } from './upstreams.js'
import type { UpstreamNode } from './node.js'

export interface NodeHeadMonitorOptions {
  intervalMs: number
  /** Time-out of one eth_blockNumber poll. */
  timeoutMs: number
  /** The best head of a network after each round (feeds the router's HeadTracker). */
  onBest?: (network: string, best: number) => void
  /** A node went out for being behind, or came back (for logs). */
  onChange?: (network: string, node: string, behind: boolean, lag: number) => void
  /**
   * A node's chain check changed: it answered another chain id than its network's (wrong), or the
   * right one again. Told once per change, with both chain ids (for logs).
   */
  onChain?: (network: string, node: string, wrong: boolean, chainId: number, expected: number) => void
}

const HEX = /"result"\s*:\s*"(0x[0-9a-fA-F]+)"/

/**
 * Polls every node of every network with eth_blockNumber and tells each node how far it is
 * behind the best node of its network, so that a node that fell behind is taken out (a client
 * would read an old chain from it) and let back in once it caught up. The poll goes to each node
 * directly, out or not: for a node that is out it is the probe that lets it back in, so clients'
 * calls are never the ones that find out whether it recovered. Each poll asks eth_chainId too (the
 * two go as one batch over HTTP): a node on another chain is out (see ChainCheck), and its head
 * is not the network's.
 */
export class NodeHeadMonitor {
  #timer: NodeJS.Timeout | undefined
  #round: Promise<void> | undefined

  constructor(
    private readonly upstreams: Upstreams,
    private readonly opts: NodeHeadMonitorOptions,
  ) {}

  /** Poll now, then every interval; resolves after the first round. */
  async start(): Promise<void> {
    await this.pollAll()
    this.#timer = setInterval(() => void this.pollAll(), this.opts.intervalMs)
    this.#timer.unref()
  }

  /** One round over every network; a round still running is joined rather than doubled. */
  pollAll(): Promise<void> {
    this.#round ??= Promise.all(this.upstreams.networks().map((n) => this.#pollNetwork(n))).then(
      () => {
        this.#round = undefined
      },
      () => {
        this.#round = undefined
      },
    )
    return this.#round
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer)
  }

  async #pollNetwork(network: string): Promise<void> {
    const pool = this.upstreams.pool(network)
    if (!pool) return
    const nodes = pool.nodes()
    // Both at once: over HTTP the node gets them in one batch (see CallCoalescer).
    const [heads] = await Promise.all([Promise.all(nodes.map((node) => this.#headOf(node))), Promise.all(nodes.map((node) => this.#checkChain(network, node)))])
    const onChain = nodes.map((node) => this.upstreams.chainOf(node)?.wrong !== true)
    let best: number | undefined
    for (let i = 0; i < nodes.length; i++) {
      const h = heads[i]
      if (h !== undefined && onChain[i] && (best === undefined || h > best)) best = h
    }
    if (best === undefined) return
    const top = best
    nodes.forEach((node, i) => {
      const head = heads[i]
      if (head === undefined || !onChain[i]) return // failed (its health already counted it), or another chain's head
      const wasBehind = node.outReason() === 'behind'
      node.observeHead(head, top - head)
      const behind = node.outReason() === 'behind'
      if (behind !== wasBehind) this.opts.onChange?.(network, node.name, behind, top - head)
    })
    this.opts.onBest?.(network, top)
  }

  #headOf(node: UpstreamNode): Promise<number | undefined> {
    return this.#quantity(node, 'eth_blockNumber')
  }

  /** Ask a configured node its chain id and tell its ChainCheck; a change is told to onChain. */
  async #checkChain(network: string, node: UpstreamNode): Promise<void> {
    const chain = this.upstreams.chainOf(node)
    if (chain === undefined) return
    const id = await this.#quantity(node, 'eth_chainId')
    if (id !== undefined && chain.observe(id)) this.opts.onChain?.(network, node.name, chain.wrong, id, chain.expected)
  }

  /** A method's hex quantity result, undefined when the node failed or answered something else. */
  async #quantity(node: UpstreamNode, method: string): Promise<number | undefined> {
    try {
      const reply = await node.call(method, [], this.opts.timeoutMs)
      const m = HEX.exec(reply.text)
      return m ? parseInt(m[1], 16) : undefined
    } catch {
      return undefined
    }
  }
}
