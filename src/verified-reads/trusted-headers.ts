import { systemClock, type Clock } from '../../actors/runtime/clock.js'
import type { Answer } from '../upstream/answer.js'
import { isUpstreamFailure } from '../upstream/errors.js'
import type { UpstreamNode } from '../upstream/node.js'
import type { UpstreamPool } from '../upstream/pool.js'
import { checkFailure } from '../proofs/check-failure.js'
import { VerificationError } from '../proofs/errors.js'
import { verifyHeader } from '../proofs/header.js'
import type { Hex, RpcHeader } from '../proofs/rpc-shapes.js'
import type { BlockRef } from './block-ref.js'
import { CheckpointChain } from './checkpoint-chain.js'

/** A header the gateway trusts: its hash checked, and agreed by enough nodes or linked by parent hashes to one that is. */
export interface TrustedHeader {
  readonly hash: Hex
  readonly number: number
  readonly stateRoot: Hex
  readonly header: RpcHeader
}

/**
 * Below the head by this many blocks, a number's header is kept as long as it is cached: a reorg
 * that deep is not expected on the chains served (Ethereum finalizes in about 64 blocks).
 */
const SETTLED_DEPTH = 64
/** A number's header near the head (or a tag's number) is asked again after this: a reorg may replace it. */
const NEAR_HEAD_MS = 1_000
/** Headers kept per network, by number and by hash (about 1 KB each). */
const MAX_KEPT = 4_096

/**
 * The headers of one network's blocks that state reads are proven against (docs/verified-answers.md).
 * A header is trusted when its fields hash to its hash (`verifyHeader`) and enough of the network's
 * healthy nodes report that hash at that height: a majority of every configured node, and at least
 * two where there are two or more (`quorum`); or when it links by parent hashes down from such a
 * header (`remember`). A block the client names by hash is looked up, and trusted only when it is
 * the agreed block at its number: naming a hash never makes it trusted. A lone node's header is
 * never trusted where others disagree; a node whose header does not hash to what it claims is
 * reported to the pool (`failedCheck`).
 *
 * Cost: `quorum` node calls per block number, shared by every read at that number (in flight and
 * kept: a settled block's header for as long as it is cached, one near the head for NEAR_HEAD_MS).
 * @example
 * const header = await headers.at({ tag: 'latest' }) // agreed by 2 of 3 nodes
 * await verifyStateProof(proof, header.stateRoot)
 */
export class TrustedHeaders {
  readonly #byNumber = new Map<number, { header: TrustedHeader | null; at: number }>()
  readonly #byHash = new Map<Hex, TrustedHeader>()
  /** latest, safe and finalized as last agreed, for NEAR_HEAD_MS. */
  readonly #byTag = new Map<string, { header: TrustedHeader | null; at: number }>()
  readonly #asking = new Map<string, Promise<TrustedHeader | null>>()
  /** Node calls made to agree on headers and to link them to the checkpoint (its walks in the background too). */
  readonly #counts = { calls: 0 }
  /** The chain of the network's verifyCheckpoint, when it has one (made again when a reload names another). */
  #chain: CheckpointChain | undefined

  constructor(
    private readonly pool: UpstreamPool,
    private readonly opts: { timeoutMs: number; clock?: Clock },
  ) {}

  /** Node calls made to agree on headers and link them, for /metrics and the cost docs. */
  get calls(): number {
    return this.#counts.calls
  }

  get #clock(): Clock {
    return this.opts.clock ?? systemClock
  }

  /**
   * The trusted header a block reference names, or null when the nodes agree there is no such block.
   * `pending` has no header: the caller does not ask.
   * @throws VerificationError HEADER_AGREEMENT when too few nodes agree on a header at that height
   */
  at(ref: BlockRef): Promise<TrustedHeader | null> {
    if ('hash' in ref) return this.#shared(`hash:${ref.hash}:${ref.requireCanonical}`, () => this.#byHashRef(ref.hash, ref.requireCanonical))
    if ('number' in ref) return this.#atNumber(ref.number)
    if (ref.tag === 'earliest') return this.#atNumber(0)
    const tag = ref.tag
    if (tag === 'pending') throw new RangeError('pending has no header')
    const kept = this.#byTag.get(tag)
    if (kept !== undefined && this.#clock.now() - kept.at < NEAR_HEAD_MS) return Promise.resolve(kept.header)
    return this.#shared(`tag:${tag}`, async () => {
      const header = await this.#atTag(tag)
      this.#byTag.set(tag, { header, at: this.#clock.now() })
      return header
    })
  }

  /**
   * Healthy nodes that may vote, and how many must agree: a majority of every node configured for
   * the network, at least two where there are two. Counted over the configured nodes, not the
   * healthy ones: a node sitting out (disputes, failures) does not vote, and does not lower the
   * quorum either. Were it counted over the healthy ones, a liar that made the honest nodes sit out
   * (each dispute a call it can provoke) would be the majority of what is left, alone.
   */
  quorum(): { nodes: UpstreamNode[]; quorum: number } {
    const configured = this.pool.nodes()
    const nodes = configured.filter((n) => n.healthy())
    return { nodes, quorum: configured.length <= 1 ? 1 : Math.floor(configured.length / 2) + 1 }
  }

  /**
   * The highest height `quorum` healthy nodes have reached (each node's head as the head monitor
   * saw it); 0 when fewer than `quorum` are healthy: then no kept header counts as settled (a lone
   * node's head could otherwise make every number look deep).
   */
  #agreedHead(): number {
    const { nodes, quorum } = this.quorum()
    const heads = nodes.map((n) => n.head ?? -1).sort((a, b) => b - a)
    return Math.max(0, heads[quorum - 1] ?? 0)
  }

  /** The header kept for this number, while it is fresh (see #fresh): no node is asked. */
  kept(number: number): TrustedHeader | undefined {
    const kept = this.#byNumber.get(number)
    return kept !== undefined && kept.header !== null && this.#fresh(number, kept.at) ? kept.header : undefined
  }

  /**
   * A header trusted by a link to a trusted one (its hash is its child's parentHash). Linked down
   * from a header agreed at its number, it is kept as an agreed one is (by number and hash); linked
   * down from a block the client named by hash, by hash only: what a client names never becomes
   * the block another client reads at a number.
   */
  remember(header: TrustedHeader, linkedFrom: 'agreed' | 'client-named'): void {
    if (linkedFrom === 'agreed') this.#keepNumber(header.number, header)
    this.#keepHash(header)
  }

  #atNumber(number: number): Promise<TrustedHeader | null> {
    const kept = this.#byNumber.get(number)
    if (kept !== undefined && this.#fresh(number, kept.at)) return Promise.resolve(kept.header)
    return this.#shared(`number:${number}`, async () => {
      const header = await this.#agreeOn(`0x${number.toString(16)}`)
      if (header !== null) await this.#onCheckpointChain(header)
      this.#keepNumber(number, header)
      return header
    })
  }

  #fresh(number: number, at: number): boolean {
    const top = this.#agreedHead()
    return number <= top - SETTLED_DEPTH || this.#clock.now() - at < NEAR_HEAD_MS
  }

  /**
   * latest / safe / finalized: each node asked says its block for the tag (asked now, not read from
   * the heads the monitor polls, which may be a poll behind a block the client just saw); one hash
   * `quorum` nodes give is trusted at once, else the lowest number any of them gave is agreed on by
   * number (a node ahead of the others, or claiming a later finalized block, is not followed beyond them).
   */
  async #atTag(tag: 'latest' | 'safe' | 'finalized'): Promise<TrustedHeader | null> {
    const lowest = { n: Number.POSITIVE_INFINITY }
    const agreed = await this.#vote(tag, (header) => {
      lowest.n = Math.min(lowest.n, header.number)
    })
    if (agreed !== undefined) {
      if (agreed !== null) await this.#onCheckpointChain(agreed)
      return agreed
    }
    if (!Number.isFinite(lowest.n)) throw checkFailure('NO_HEADER_REPORTED', { tag })
    return this.#atNumber(lowest.n)
  }

  async #agreeOn(blockParam: string): Promise<TrustedHeader | null> {
    const agreed = await this.#vote(blockParam)
    if (agreed === undefined) {
      const { quorum, nodes } = this.quorum()
      throw checkFailure('NO_QUORUM', { block: blockParam, quorum, configured: this.pool.nodes().length, healthy: nodes.length })
    }
    return agreed
  }

  /**
   * Ask nodes for the header at `blockParam` (`quorum` at once, then one more at a time) until
   * `quorum` give the same checked hash (that header), or the same "no such block" (null); undefined
   * when every healthy node was asked and neither happened.
   */
  async #vote(blockParam: string, seen?: (header: TrustedHeader) => void): Promise<TrustedHeader | null | undefined> {
    const { nodes, quorum } = this.quorum()
    // Nodes that have reached the height (as far as known) first: the others would say "no block".
    const target = /^0x/.test(blockParam) ? Number.parseInt(blockParam, 16) : -1
    nodes.sort((a, b) => Number((b.head ?? -1) >= target) - Number((a.head ?? -1) >= target))
    const votes = new Map<string, { header: TrustedHeader | null; count: number }>()
    let next = 0
    const ask = async (node: UpstreamNode): Promise<void> => {
      const header = await this.#headerFrom(node, blockParam)
      if (header === undefined) return
      if (header !== null) seen?.(header)
      const key = header === null ? 'none' : header.hash
      const vote = votes.get(key) ?? { header, count: 0 }
      vote.count++
      votes.set(key, vote)
    }
    const decided = (): TrustedHeader | null | undefined => {
      for (const vote of votes.values()) if (vote.count >= quorum) return vote.header
      return undefined
    }
    await Promise.all(nodes.slice(0, quorum).map(ask))
    next = quorum
    for (;;) {
      const header = decided()
      if (header !== undefined) {
        if (header !== null) this.#keepHash(header)
        return header
      }
      if (next >= nodes.length) return undefined
      await ask(nodes[next++]!)
    }
  }

  /** One node's header at the block, checked: null for "no such block", undefined for no vote (a failure, or a header that does not hash to its hash). */
  async #headerFrom(node: UpstreamNode, blockParam: string): Promise<TrustedHeader | null | undefined> {
    const method = /^0x[0-9a-fA-F]{64}$/.test(blockParam) ? 'eth_getBlockByHash' : 'eth_getBlockByNumber'
    let answer: Answer
    try {
      this.#counts.calls++
      answer = await this.pool.call({
        kind: node.kind,
        method,
        params: [blockParam, false],
        idJson: '0',
        node: node.name,
        timeoutMs: this.opts.timeoutMs,
        checked: true,
      })
    } catch (err) {
      if (isUpstreamFailure(err)) return undefined
      throw err
    }
    if (answer.isError) return /header not found|not found|out of range|block height/i.test(answer.text) ? null : undefined
    let result: RpcHeader | null
    try {
      result = (JSON.parse(answer.text) as { result?: RpcHeader | null }).result ?? null
    } catch {
      return undefined
    }
    if (result === null) return null
    try {
      const hash = verifyHeader(result)
      if (method === 'eth_getBlockByHash' && hash !== blockParam.toLowerCase()) {
        throw checkFailure('HEADER_NOT_THE_NAMED', { named: blockParam.toLowerCase(), hash })
      }
      return { hash, number: Number(result.number), stateRoot: result.stateRoot.toLowerCase() as Hex, header: result }
    } catch (err) {
      if (!(err instanceof VerificationError)) throw err
      this.pool.failedCheck(node, err.code)
      return undefined
    }
  }

  /**
   * A block the client named by hash: trusted only when it is the block the nodes agree on at its
   * number (which also holds it to the checkpoint's chain, when there is one). A node's header
   * that hashes to the hash proves the header is that block's, not that the block is the chain's:
   * anyone can make a header whose parent is a real block and whose state root is their own, and
   * were such a header trusted (and kept), every read at that hash, and at the numbers of the
   * headers linked below it, would be proven against a state no honest node has.
   * @returns null when enough nodes say there is no such block, or (requireCanonical) when it is
   *   not the agreed block at its number
   * @throws VerificationError HEADER_AGREEMENT when it is not the agreed block at its number, or
   *   the nodes do not agree on one there
   */
  async #byHashRef(hash: Hex, requireCanonical: boolean): Promise<TrustedHeader | null> {
    const kept = this.#byHash.get(hash)
    if (kept !== undefined) return kept
    const { nodes, quorum } = this.quorum()
    let named: TrustedHeader | null = null
    let absent = 0
    for (const node of nodes) {
      const h = await this.#headerFrom(node, hash)
      if (h !== null && h !== undefined) {
        named = h
        break
      }
      // Enough nodes say they do not have it: no such block (a lying node cannot hide one alone).
      if (h === null && ++absent >= quorum) return null
    }
    if (named === null) return null
    const agreed = await this.#atNumber(named.number)
    if (agreed?.hash === hash) return agreed
    if (requireCanonical) return null
    throw checkFailure('NAMED_BLOCK_NOT_AGREED', { hash, number: named.number, agreed: agreed?.hash ?? null })
  }

  /**
   * An agreed header is also held to the network's configured checkpoint, when there is one: linked
   * to it by parent hashes (CheckpointChain), or refused (HEADER_AGREEMENT).
   */
  async #onCheckpointChain(header: TrustedHeader): Promise<void> {
    const checkpoint = this.pool.verifyCheckpoint
    if (checkpoint === undefined) return
    if (this.#chain === undefined || this.#chain.checkpoint.number !== checkpoint.number || this.#chain.checkpoint.hash !== checkpoint.hash.toLowerCase()) {
      this.#chain = new CheckpointChain(this.pool, checkpoint, { timeoutMs: this.opts.timeoutMs, counts: this.#counts })
    }
    await this.#chain.link(header)
  }

  #keepNumber(number: number, header: TrustedHeader | null): void {
    if (this.#byNumber.size >= MAX_KEPT) this.#byNumber.delete(this.#byNumber.keys().next().value!)
    this.#byNumber.delete(number)
    this.#byNumber.set(number, { header, at: this.#clock.now() })
  }

  #keepHash(header: TrustedHeader): void {
    if (this.#byHash.size >= MAX_KEPT) this.#byHash.delete(this.#byHash.keys().next().value!)
    this.#byHash.set(header.hash, header)
  }

  #shared(key: string, make: () => Promise<TrustedHeader | null>): Promise<TrustedHeader | null> {
    const running = this.#asking.get(key)
    if (running !== undefined) return running
    const p = make().finally(() => this.#asking.delete(key))
    this.#asking.set(key, p)
    return p
  }
}
