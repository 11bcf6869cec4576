import type { Upstreams } from '../upstream/upstreams.js'
import type { UpstreamPool } from '../upstream/pool.js'
import type { NodeKind } from '../core/node-kind.js'

export interface FinalityTrackerOptions {
  intervalMs: number
  timeoutMs: number
  /**
   * Blocks below the head a block must be to count as final: head − depth on a network whose
   * nodes have no `finalized` tag, and the most a node's tag is believed where they have one.
   */
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
 * node supports the tag, head − depth where it does not; never above head − depth whatever the
 * tag says (Ganache and Hardhat call their head finalized, and so do some sidechains). Each poll
 * checks that the previous finalized block is still on the node's chain with the same hash: if
 * not (a dev chain's deep `anvil_reorg` or `evm_revert`, a depth set too low), `onReorg` drops the
 * network's cached answers before the new finalized block is used.
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
    const hex = (n: number): string => `0x${n.toString(16)}`
    const block = async (tag: string): Promise<{ ref?: BlockRef; error: boolean }> => {
      const reply = await pool.call({
        kind,
        method: 'eth_getBlockByNumber',
        params: [tag, false],
        idJson: '0',
        timeoutMs: this.opts.timeoutMs,
        node,
        alone: true,
      })
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
    const head = this.opts.headOf(network)
    const deepest = head === undefined ? -1 : head - this.opts.depthFor(network)
    if (state.mode === 'depth') {
      if (deepest >= 0) current = (await block(hex(deepest))).ref
    } else if (current !== undefined && (head === undefined || current.number > Math.max(0, deepest))) {
      // A tag above head − depth is not believed: a node that calls its head final (dev chains)
      // would have every head block cached, and an evm_revert served from the cache. The genesis
      // block is final on a chain younger than the depth (no revert undoes it; a new genesis is a
      // changed hash, seen below). Without a known head, or without that block on the node (its
      // chain is shorter than the head known), nothing is final for now: cached answers by hash
      // or number are not served meanwhile.
      current = head === undefined ? undefined : (await block(hex(Math.max(0, deepest)))).ref
      if (current === undefined) {
        state.finalized = undefined
        return
      }
    }
    if (current === undefined) return

    const anchor = state.anchor
    if (anchor !== undefined) {
      const asked = anchor.number === current.number ? { ref: current, error: false } : await block(hex(anchor.number))
      // The node could not say (an error answer): nothing above what it calls final now, and the
      // anchor is asked about again at the next poll.
      if (asked.error) {
        state.finalized = Math.min(current.number, anchor.number)
        return
      }
      const now = asked.ref
      // No block where the finalized one was: the same node's chain is shorter than before, so
      // the anchored block left it (evm_revert, anvil_reorg, a reset), and what was cached from it
      // with it. (Another node starts a new anchor: see #nodeFor.)
      if (now === undefined || now.hash !== anchor.hash) {
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
