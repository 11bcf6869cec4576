import type { UpstreamPool } from '../upstream/pool.js'
import { checkFailure } from '../proofs/check-failure.js'
import type { VerificationError } from '../proofs/errors.js'
import type { Hex, RpcHeader } from '../proofs/rpc-shapes.js'
import { type HeaderSource, hashOf, headersAt, linkingFromAny, walkDown } from './header-walk.js'

/** The furthest a header may be from the nearest one already linked: a longer walk is refused. */
export const MAX_LINK_BLOCKS = 10_000
/**
 * Headers a walk may ask for inside one tenant's call (about a second of a node's batches): a
 * longer walk is the network's own, run once in the background, and the call waits for it at most
 * WALK_WAIT_MS. Without it one eth_getBalance made 10,002 header calls, and the CPU to hash them,
 * inside its own call, for a charge of one read.
 */
export const CALL_WALK_BLOCKS = 256
/** How long a call waits for the network's walk to the checkpoint before it is refused with a retry. */
export const WALK_WAIT_MS = 2_000
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
 * MAX_LINK_BLOCKS is refused (keep the checkpoint recent); one longer than CALL_WALK_BLOCKS is the
 * network's, in the background, never inside a tenant's call.
 * @example
 * await chain.link(agreedHeader) // throws HEADER_AGREEMENT when it is on another chain
 */
export class CheckpointChain {
  readonly #links = new Map<number, Link>()
  readonly checkpoint: { readonly number: number; readonly hash: Hex }
  readonly #source: HeaderSource

  /** The longest walk (MAX_LINK_BLOCKS unless given: the tests walk a chain of a hundred). */
  readonly #maxLinkBlocks: number
  /** The longest walk inside a caller's own call (CALL_WALK_BLOCKS unless given), and how long it waits for a longer one. */
  readonly #callWalkBlocks: number
  readonly #waitMs: number
  /** The network's walk under way, if any: one at a time, shared by every call that needs a long one. */
  #walk: { readonly hash: Hex; readonly done: Promise<unknown> } | undefined

  constructor(
    pool: UpstreamPool,
    checkpoint: { number: number; hash: string },
    opts: { timeoutMs: number; maxLinkBlocks?: number; callWalkBlocks?: number; waitMs?: number; counts?: { calls: number } },
  ) {
    this.#source = { pool, timeoutMs: opts.timeoutMs, counts: opts.counts ?? { calls: 0 } }
    this.#maxLinkBlocks = opts.maxLinkBlocks ?? MAX_LINK_BLOCKS
    this.#callWalkBlocks = opts.callWalkBlocks ?? CALL_WALK_BLOCKS
    this.#waitMs = opts.waitMs ?? WALK_WAIT_MS
    this.checkpoint = { number: checkpoint.number, hash: checkpoint.hash.toLowerCase() as Hex }
    this.#links.set(checkpoint.number, { hash: this.checkpoint.hash, parentHash: undefined })
  }

  /** Header calls made while walking, for the cost docs and the tests. */
  get calls(): number {
    return this.#source.counts.calls
  }

  /**
   * Resolves when `header` (hash-checked already) is on the checkpoint's chain. A walk of at most
   * CALL_WALK_BLOCKS headers is made in the call; a longer one is started as the network's (once:
   * calls that need one while it runs wait for it), and the call waits for it at most WALK_WAIT_MS.
   * @throws VerificationError HEADER_AGREEMENT when it is not, is too far to walk to, or the
   *   network's walk to it is still under way (then a retry after it is answered)
   */
  async link(header: { number: number; hash: Hex; header: RpcHeader }): Promise<void> {
    for (;;) {
      const known = this.#links.get(header.number)
      if (known !== undefined) {
        if (known.hash !== header.hash) throw this.#offChain(header.number, known.hash, header.hash)
        return
      }
      const above = this.#nearest(header.number, 'above')
      const blocks = above !== undefined ? above - header.number : header.number - this.#nearest(header.number, 'below')!
      this.#tooFar(blocks)
      if (blocks <= this.#callWalkBlocks) return this.#linkNow(header)
      await this.#networkWalk(header, blocks)
    }
  }

  /**
   * Wait (at most #waitMs) for the network's walk, started for `header` when none runs. Returns
   * when a walk ended (the caller looks again: the one that ran may have been for another header);
   * throws its error when it was this header's.
   */
  async #networkWalk(header: { number: number; hash: Hex; header: RpcHeader }, blocks: number): Promise<void> {
    let walk = this.#walk
    if (walk === undefined) {
      const done = this.#linkNow(header).then(
        () => undefined,
        (err: unknown) => err,
      )
      const started = { hash: header.hash, done }
      this.#walk = walk = started
      void done.then(() => {
        if (this.#walk === started) this.#walk = undefined
      })
    }
    let timer: NodeJS.Timeout | undefined
    const waited = new Promise<'waiting'>((resolve) => {
      timer = setTimeout(() => resolve('waiting'), this.#waitMs)
    })
    const outcome = await Promise.race([walk.done.then((err) => ({ err })), waited]).finally(() => clearTimeout(timer))
    if (outcome === 'waiting') {
      throw checkFailure('NOT_YET_LINKED', { block: header.number, checkpoint: this.checkpoint.number, blocks })
    }
    if (walk.hash === header.hash && outcome.err !== undefined) throw outcome.err
  }

  /** Link `header` now: down from the nearest linked header above it, or from itself down to the nearest linked one below. */
  async #linkNow(header: { number: number; hash: Hex; header: RpcHeader }): Promise<void> {
    const { number, hash } = header
    const above = this.#nearest(number, 'above')
    if (above !== undefined) {
      // Down from the nearest linked header above: the hash the walk reaches at `number` must be
      // this one. Each link it keeps hangs from a linked header, so it is kept as it is made.
      this.#tooFar(above - number)
      await this.#walkDown(await this.#parentOf(above), above - 1, number, this.#links)
      const at = this.#links.get(number)!.hash
      this.#bound()
      if (at !== hash) throw this.#offChain(number, at, hash)
      return
    }
    // Above every linked header: from this one down to the nearest linked below, whose hash the
    // walk must reach. Its links hang from this header, not yet from a linked one: they are kept
    // only once the walk reached it (a read meanwhile, of this number or one above, finds nothing
    // linked there and walks, or waits, itself).
    const below = this.#nearest(number, 'below')!
    this.#tooFar(number - below)
    const parentHash = header.header.parentHash.toLowerCase() as Hex
    const walked = new Map<number, Link>([[number, { hash, parentHash }]])
    const reached = await this.#walkDown(parentHash, number - 1, below + 1, walked)
    const expected = this.#links.get(below)!.hash
    if (reached !== expected) throw this.#offChain(below, expected, reached)
    for (const [n, link] of walked) this.#links.set(n, link)
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
    throw checkFailure('TOO_FAR_FROM_CHECKPOINT', { maxBlocks: this.#maxLinkBlocks, checkpoint: this.checkpoint.number, blocks })
  }

  /** A linked header's parent hash (the checkpoint's is fetched once: its header must hash to the checkpoint). */
  async #parentOf(number: number): Promise<Hex> {
    const link = this.#links.get(number)!
    if (link.parentHash !== undefined) return link.parentHash
    let [header] = await headersAt(this.#source, [number])
    // One node's header is not the checkpoint's (or none came): another node's may be.
    if (hashOf(header) !== link.hash) header = await linkingFromAny(this.#source, number, link.hash)
    if (header === undefined) throw this.#offChain(number, link.hash, undefined)
    link.parentHash = header.parentHash.toLowerCase() as Hex
    return link.parentHash
  }

  /** Walk from `top` down to `bottom` (walkDown), each link put in `into`; the parent hash of the header at `bottom`. */
  async #walkDown(parentHash: Hex, top: number, bottom: number, into: Map<number, Link>): Promise<Hex> {
    const reached = await walkDown(this.#source, parentHash, top, bottom, (n, hash, parent) => into.set(n, { hash, parentHash: parent }))
    if (typeof reached !== 'string') throw this.#offChain(reached.unlinked, reached.expected, undefined)
    return reached
  }

  /** At most MAX_LINKS links: the lowest go first (a walk down from a higher one finds them again), never the checkpoint. */
  #bound(): void {
    if (this.#links.size <= MAX_LINKS) return
    const drop = [...this.#links.keys()].filter((n) => n !== this.checkpoint.number).sort((a, b) => a - b)
    for (const n of drop.slice(0, this.#links.size - MAX_LINKS)) this.#links.delete(n)
  }

  /** `got` undefined: no node has a header that links. */
  #offChain(number: number, linked: string, got: string | undefined): VerificationError {
    return checkFailure('OFF_THE_CHECKPOINT_CHAIN', { block: number, linked, got })
  }
}
