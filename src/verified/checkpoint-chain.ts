import type { UpstreamPool } from '../upstream/pool.js'
import { VerificationError } from '../verify/errors.js'
import type { Hex, RpcHeader } from '../verify/rpc-shapes.js'
import { type HeaderSource, hashOf, headersAt, linkingFromAny, walkDown } from './header-walk.js'

/** The furthest a header may be from the nearest one already linked: a longer walk is refused. */
export const MAX_LINK_BLOCKS = 10_000
/** Links kept (number → hash and parent hash, about 200 bytes each); the lowest go first, the checkpoint never. */
const MAX_LINKS = 20_000

interface Link {
  hash: Hex
  /** Unknown for the checkpoint until its header is fetched. */
  parentHash: Hex | undefined
}

/**
 * The chain of one network's configured checkpoint (`networks.<slug>.verifyCheckpoint`): a header
 * is on it when parent hashes link it to the checkpoint, each link one hash check
 * (docs/verified-answers.md, "Where a header's trust comes from"). What nodes agree on is then
 * also held to the chain the operator named: a network of one node, or all its nodes on another
 * fork, cannot have a header of theirs trusted.
 *
 * The headers between are fetched from any node (in upstream batches) and each must hash to its
 * child's `parentHash`: a node cannot forge one. A header is linked by walking down from the
 * nearest linked header above it, or from itself down to the nearest linked one below it; links
 * are kept, so a chain followed head by head costs one header a block. A walk longer than
 * MAX_LINK_BLOCKS is refused (keep the checkpoint recent).
 * @example
 * await chain.link(agreedHeader) // throws HEADER_AGREEMENT when it is on another chain
 */
export class CheckpointChain {
  readonly #links = new Map<number, Link>()
  readonly checkpoint: { readonly number: number; readonly hash: Hex }
  readonly #source: HeaderSource

  /** The longest walk (MAX_LINK_BLOCKS unless given: the tests walk a chain of a hundred). */
  readonly #maxLinkBlocks: number

  constructor(pool: UpstreamPool, checkpoint: { number: number; hash: string }, opts: { timeoutMs: number; maxLinkBlocks?: number }) {
    this.#source = { pool, timeoutMs: opts.timeoutMs, counts: { calls: 0 } }
    this.#maxLinkBlocks = opts.maxLinkBlocks ?? MAX_LINK_BLOCKS
    this.checkpoint = { number: checkpoint.number, hash: checkpoint.hash.toLowerCase() as Hex }
    this.#links.set(checkpoint.number, { hash: this.checkpoint.hash, parentHash: undefined })
  }

  /**
   * Resolves when `header` (hash-checked already) is on the checkpoint's chain.
   * @throws VerificationError HEADER_AGREEMENT when it is not, or is too far to walk to
   */
  /** Header calls made while walking, for the cost docs and the tests. */
  get calls(): number {
    return this.#source.counts.calls
  }

  async link(header: { number: number; hash: Hex; header: RpcHeader }): Promise<void> {
    const { number, hash } = header
    const known = this.#links.get(number)
    if (known !== undefined) {
      if (known.hash !== hash) throw this.#offChain(number, known.hash, hash)
      return
    }
    const above = this.#nearest(number, 'above')
    if (above !== undefined) {
      // Down from the nearest linked header above: the hash the walk reaches at `number` must be this one.
      this.#tooFar(above - number)
      await this.#walkDown(await this.#parentOf(above), above - 1, number)
      const reached = this.#links.get(number)!.hash
      this.#bound()
      if (reached !== hash) throw this.#offChain(number, reached, hash)
      return
    }
    // Above every linked header: from this one down to the nearest linked below, whose hash the walk must reach.
    const below = this.#nearest(number, 'below')!
    this.#tooFar(number - below)
    this.#links.set(number, { hash, parentHash: header.header.parentHash.toLowerCase() as Hex })
    try {
      const reached = await this.#walkDown(this.#links.get(number)!.parentHash!, number - 1, below + 1)
      const expected = this.#links.get(below)!.hash
      if (reached !== expected) throw this.#offChain(below, expected, reached)
    } catch (err) {
      // What this walk kept is not linked: forget it.
      for (let n = number; n > below; n--) this.#links.delete(n)
      throw err
    }
    this.#bound()
  }

  #nearest(number: number, side: 'above' | 'below'): number | undefined {
    let best: number | undefined
    for (const n of this.#links.keys()) {
      if (side === 'above' ? n > number && (best === undefined || n < best) : n < number && (best === undefined || n > best)) best = n
    }
    return best
  }

  #tooFar(blocks: number): void {
    if (blocks <= this.#maxLinkBlocks) return
    throw new VerificationError(
      'HEADER_AGREEMENT',
      'the block asked for',
      `a header at most ${this.#maxLinkBlocks} blocks from one linked to the configured checkpoint (block ${this.checkpoint.number})`,
      `${blocks} blocks away: configure a newer verifyCheckpoint`,
    )
  }

  /** A linked header's parent hash (the checkpoint's is fetched once: its header must hash to the checkpoint). */
  async #parentOf(number: number): Promise<Hex> {
    const link = this.#links.get(number)!
    if (link.parentHash !== undefined) return link.parentHash
    let [header] = await headersAt(this.#source, [number])
    // One node's header is not the checkpoint's (or none came): another node's may be.
    if (hashOf(header) !== link.hash) header = await linkingFromAny(this.#source, number, link.hash)
    if (header === undefined) throw this.#offChain(number, link.hash, 'no node has a header that links')
    link.parentHash = header.parentHash.toLowerCase() as Hex
    return link.parentHash
  }

  /** Walk from `top` down to `bottom` (walkDown), keeping each link; the parent hash of the header at `bottom`. */
  async #walkDown(parentHash: Hex, top: number, bottom: number): Promise<Hex> {
    const reached = await walkDown(this.#source, parentHash, top, bottom, (n, hash, parent) => this.#links.set(n, { hash, parentHash: parent }))
    if (typeof reached !== 'string') throw this.#offChain(reached.unlinked, reached.expected, 'no node has a header that links')
    return reached
  }

  /** At most MAX_LINKS links: the lowest go first (a walk down from a higher one finds them again), never the checkpoint. */
  #bound(): void {
    if (this.#links.size <= MAX_LINKS) return
    const drop = [...this.#links.keys()].filter((n) => n !== this.checkpoint.number).sort((a, b) => a - b)
    for (const n of drop.slice(0, this.#links.size - MAX_LINKS)) this.#links.delete(n)
  }

  #offChain(number: number, expected: string, got: string): VerificationError {
    return new VerificationError('HEADER_AGREEMENT', `block ${number}`, `${expected} (linked to the configured checkpoint)`, got)
  }
}
