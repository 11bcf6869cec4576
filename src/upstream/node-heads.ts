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
}

const HEX = /"result"\s*:\s*"(0x[0-9a-fA-F]+)"/

/**
 * Polls every node of every network with eth_blockNumber and tells each node how far it is
 * behind the best node of its network, so that a node that fell behind is taken out (a client
 * would read an old chain from it) and let back in once it caught up. The poll goes to each node
 * directly, out or not: for a node that is out it is the probe that lets it back in, so clients'
 * calls are never the ones that find out whether it recovered.
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
    const heads = await Promise.all(nodes.map((node) => this.#headOf(node)))
    let best: number | undefined
    for (const h of heads) if (h !== undefined && (best === undefined || h > best)) best = h
    if (best === undefined) return
    nodes.forEach((node, i) => {
      const head = heads[i]
      if (head === undefined) return // failed: its health already counted it
      const wasBehind = node.outReason() === 'behind'
      node.observeHead(head, best - head)
      const behind = node.outReason() === 'behind'
      if (behind !== wasBehind) this.opts.onChange?.(network, node.name, behind, best - head)
    })
    this.opts.onBest?.(network, best)
  }

  async #headOf(node: UpstreamNode): Promise<number | undefined> {
    try {
      const reply = await node.call('eth_blockNumber', [], this.opts.timeoutMs)
      const m = HEX.exec(reply.text)
      return m ? parseInt(m[1], 16) : undefined
    } catch {
      return undefined
    }
  }
}
