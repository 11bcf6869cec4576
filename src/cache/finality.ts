import type { Upstreams } from '../upstream/upstreams.js'
import type { UpstreamPool } from '../upstream/pool.js'
import type { NodeKind } from '../core/node-kind.js'

export interface FinalityTrackerOptions {
  intervalMs: number
  timeoutMs: number
  /** Blocks below the head taken as final on a network whose nodes have no `finalized` tag. */
  depthFor: (network: string) => number
  /** The network's head as the head monitor knows it (for the depth rule). */
  headOf: (network: string) => number | undefined
  /** A block at or below the finalized one changed: everything cached for the network is stale. */
  onReorg: (network: string, block: number) => Promise<void>
  onModeChosen?: (network: string, mode: FinalityMode) => void
  onError?: (network: string, err: unknown) => void
}

/** `tag`: the node's eth_getBlockByNumber('finalized'); `depth`: head − a configured depth. */
export type FinalityMode = 'tag' | 'depth'

interface BlockRef {
  number: number
  hash: string
}

interface NetworkFinality {
  mode?: FinalityMode
  finalized?: number
  /** The finalized block at the last poll: if its hash changes, a reorg went below finality. */
  anchor?: BlockRef
  /** The node asked, kept while it is healthy, so that two nodes' views are never compared. */
  node?: string
}

/**
 * The finalized block of each network, for the cache: only answers at or below it are stored.
 * Polled from one node (kept while it is healthy): `eth_getBlockByNumber('finalized')` where the
 * node supports the tag, head − depth where it does not. Each poll checks that the previous
 * finalized block still has the same hash: if not (a dev chain's deep `anvil_reorg`, a depth set
 * too low), `onReorg` drops the network's cached answers before the new finalized block is used.
 */
export class FinalityTracker {
  readonly #networks = new Map<string, NetworkFinality>()
  #timer: NodeJS.Timeout | undefined
  #round: Promise<void> | undefined

  constructor(
    private readonly upstreams: Upstreams,
    private readonly opts: FinalityTrackerOptions,
  ) {}

  /** The finalized block number of a network, undefined until known. */
  finalized(network: string): number | undefined {
    return this.#networks.get(network)?.finalized
  }

  mode(network: string): FinalityMode | undefined {
    return this.#networks.get(network)?.mode
  }

  async start(): Promise<void> {
    await this.pollAll()
    this.#timer = setInterval(() => void this.pollAll(), this.opts.intervalMs)
    this.#timer.unref()
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer)
  }

  /** One poll of every network; a poll still running is joined rather than doubled. */
  pollAll(): Promise<void> {
    this.#round ??= Promise.all(this.upstreams.networks().map((n) => this.#poll(n).catch((err: unknown) => this.opts.onError?.(n, err)))).then(() => {
      this.#round = undefined
    })
    return this.#round
  }

  async #poll(network: string): Promise<void> {
    const pool = this.upstreams.pool(network)
    if (!pool) return
    let state = this.#networks.get(network)
    if (!state) this.#networks.set(network, (state = {}))
    const kind: NodeKind = pool.hasHealthy('full') || !pool.hasKind('archive') ? 'full' : 'archive'
    const node = this.#nodeFor(pool, kind, state)
    if (node === undefined) return
    const block = async (tag: string): Promise<{ ref?: BlockRef; error: boolean }> => {
      const reply = await pool.call(kind, 'eth_getBlockByNumber', [tag, false], '0', { timeoutMs: this.opts.timeoutMs, node, alone: true })
      if (reply.isError) return { error: true }
      const result = (JSON.parse(reply.text) as { result?: { number?: string; hash?: string } | null }).result
      if (!result || typeof result.number !== 'string' || typeof result.hash !== 'string') return { error: false }
      return { ref: { number: parseInt(result.number, 16), hash: result.hash }, error: false }
    }

    let current: BlockRef | undefined
    if (state.mode !== 'depth') {
      const tagged = await block('finalized')
      if (tagged.ref) {
        current = tagged.ref
        if (state.mode === undefined) this.opts.onModeChosen?.(network, (state.mode = 'tag'))
      } else if (tagged.error && state.mode === undefined) {
        // The node does not know the tag (pre-merge clients, some L2s): fall back to a depth.
        this.opts.onModeChosen?.(network, (state.mode = 'depth'))
      }
    }
    if (state.mode === 'depth') {
      const head = this.opts.headOf(network)
      const n = head === undefined ? -1 : head - this.opts.depthFor(network)
      if (n >= 0) current = (await block(`0x${n.toString(16)}`)).ref
    }
    if (current === undefined) return

    const anchor = state.anchor
    if (anchor !== undefined) {
      const now = anchor.number === current.number ? current : (await block(`0x${anchor.number.toString(16)}`)).ref
      if (now === undefined) {
        // The node has no block where the finalized one was: its chain is shorter than before (a
        // reorg being mined, a node behind). Keep the anchor, to compare once the node is back
        // there, and cache nothing above what the node calls final now.
        state.finalized = Math.min(current.number, anchor.number)
        return
      }
      if (now.hash !== anchor.hash) {
        state.finalized = undefined
        await this.opts.onReorg(network, anchor.number)
      }
    }
    // The anchor never moves back: a reorg between a lower finalized block and it would go unseen.
    if (anchor === undefined || current.number >= anchor.number || state.finalized === undefined) state.anchor = current
    state.finalized = current.number
  }

  /** The node polled: the same one while it is healthy. */
  #nodeFor(pool: UpstreamPool, kind: NodeKind, state: NetworkFinality): string | undefined {
    const nodes = pool.nodes().filter((n) => n.kind === kind)
    const kept = nodes.find((n) => n.name === state.node && n.healthy())
    if (kept) return kept.name
    const next = nodes.find((n) => n.healthy())
    if (next === undefined) return undefined
    if (state.node !== undefined && state.node !== next.name) state.anchor = undefined // another node: its chain view starts anew
    state.node = next.name
    return next.name
  }
}
