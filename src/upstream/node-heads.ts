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
/** A newHeads notification: its subscription id, and the block number in it. */
const SUBSCRIPTION = /"subscription"\s*:\s*"(0x[0-9a-fA-F]+)"/
const NUMBER = /"number"\s*:\s*"(0x[0-9a-fA-F]{1,16})"/

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
    private opts: NodeHeadMonitorOptions,
  ) {}

  /** The node's own newHeads subscription id on its WebSocket, while it has one. */
  readonly #headSubscriptions = new Map<UpstreamNode, string>()
  #stopped = false

  /**
   * Poll now, then every interval; resolves after the first round. Nodes with a WebSocket are
   * also followed by their newHeads (see #follow): a new block counts the moment the node shows it.
   */
  async start(): Promise<void> {
    await this.pollAll()
    this.#timer = setInterval(() => void this.pollAll(), this.opts.intervalMs)
    this.#timer.unref()
    for (const network of this.upstreams.networks()) for (const node of this.upstreams.pool(network)!.nodes()) this.#follow(network, node)
  }

  /**
   * A reload built these nodes and dropped those: follow the new ones' heads, forget the old ones
   * (the polls read each network's nodes anew every round), and poll at the new interval.
   */
  apply(next: {
    built: readonly { network: string; node: UpstreamNode }[]
    dropped: readonly UpstreamNode[]
    /** health.pollMs */
    intervalMs: number
    /** Of one poll. */
    timeoutMs: number
  }): void {
    const { built, dropped, intervalMs, timeoutMs } = next
    for (const node of dropped) this.#headSubscriptions.delete(node)
    const interval = intervalMs !== this.opts.intervalMs
    this.opts = { ...this.opts, intervalMs, timeoutMs }
    if (this.#stopped) return
    for (const { network, node } of built) this.#follow(network, node)
    if (interval && this.#timer !== undefined) {
      clearInterval(this.#timer)
      this.#timer = setInterval(() => void this.pollAll(), intervalMs)
      this.#timer.unref()
    }
    // The new nodes are measured now, not an interval later: until then they have no head and no chain check.
    if (built.length > 0) void this.pollAll()
  }

  /**
   * Subscribe to the node's newHeads over its WebSocket (again after each reconnect), and take each
   * head it announces as its head at once: between two polls (health.pollMs) the network's head
   * is the highest any node has announced, so a node a block behind is passed over for the next
   * `latest` read, not up to two seconds later. The lag that takes a node out stays the poll's.
   * The notifications of this subscription stop here: the handler is chained in front of the
   * ones installed before it (the client subscriptions' hub), which never see them.
   */
  #follow(network: string, node: UpstreamNode): void {
    const ws = node.ws
    if (ws === undefined) return
    const onNotification = ws.onNotification
    ws.onNotification = (text) => {
      const id = this.#headSubscriptions.get(node)
      if (id === undefined || SUBSCRIPTION.exec(text)?.[1] !== id) return onNotification(text)
      const hex = NUMBER.exec(text)?.[1]
      if (hex === undefined) return
      node.sawHead(Number.parseInt(hex, 16))
      if (node.head !== undefined && this.upstreams.chainOf(node)?.wrong !== true) this.opts.onBest?.(network, node.head)
    }
    const subscribe = (): void => {
      if (this.#stopped || this.upstreams.chainOf(node) === undefined) return
      ws.call('eth_subscribe', ['newHeads'], this.opts.timeoutMs).then(
        (answer) => {
          const id = /"result"\s*:\s*"(0x[0-9a-fA-F]+)"/.exec(answer)?.[1]
          if (id !== undefined) this.#headSubscriptions.set(node, id)
        },
        // No newHeads on this node (or the socket dropped again): the poll is what is known.
        () => {},
      )
    }
    const onStateChange = ws.onStateChange
    ws.onStateChange = (open) => {
      onStateChange(open)
      this.#headSubscriptions.delete(node)
      if (open) subscribe()
    }
    if (ws.isOpen()) subscribe()
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
    this.#stopped = true
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
      const reply = await node.call({ method, params: [], alone: true }, this.opts.timeoutMs)
      const m = HEX.exec(reply.text)
      return m ? parseInt(m[1], 16) : undefined
    } catch {
      return undefined
    }
  }
}
