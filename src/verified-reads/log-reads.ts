import type { NodeKind } from '../core/node-kind.js'
import type { Answer } from '../upstream/answer.js'
import type { PoolCallOptions, UpstreamPool } from '../upstream/pool.js'
import { REFUSED_BECAUSE } from '../errors/messages.js'
import { checkFailure } from '../proofs/check-failure.js'
import { VerificationError } from '../proofs/errors.js'
import { verifyHeader } from '../proofs/header.js'
import { bloomMayMatch, type LogFilter } from '../proofs/log-bloom.js'
import { type LogMatch, logMatch } from '../proofs/log-filter.js'
import type { Hex, RpcHeader, RpcLog } from '../proofs/rpc-shapes.js'
import type { VerifiedBlockReads } from './block-reads.js'
import { blockRefOf } from './block-ref.js'
import { firstPassing, harmlessOnly } from './first-passing.js'
import type { TrustedHeader, TrustedHeaders } from './trusted-headers.js'
import { LogsRangeTooWide } from './errors.js'

/** Bounds of a verified eth_getLogs (per part of a split range: src/get-logs/). */
export interface LogProofLimits {
  /** Blocks of a range whose headers are fetched and linked (one node call each). */
  maxBlocks: number
  /** Blocks whose bloom may match the filter, whose receipts are fetched and proven (one node call each). */
  maxCandidates: number
}

/** Headers asked of a node in one upstream batch, and such batches in flight at once, for one range. */
const HEADER_BATCH = 100
const HEADER_BATCHES_AT_ONCE = 4

/** The defaults (docs/verified-answers.md). */
export const LOG_PROOF_LIMITS: LogProofLimits = { maxBlocks: 2_000, maxCandidates: 100 }

/**
 * eth_getLogs proven complete (docs/verified-answers.md): the range's headers are linked by parent
 * hashes down from a trusted header (each hash checked); a block whose bloom cannot match the
 * filter holds no such log (a bloom has no false negatives); every other block's receipts are
 * proven against its receiptsRoot, and the node's answer must be the logs they hold that match the
 * filter, in order: a log left out, added, moved or altered fails LOGS_COMPLETE. Where the clients'
 * matching rules differ (logMatch: trailing wildcards against logs with fewer topics), the logs
 * only some clients match may be present or absent. The node's
 * answer is handed on as it is.
 *
 * Cost: the node's eth_getLogs, a header per block of the range but the top (linked; asked in
 * upstream batches of 100), the top's agreement (shared), and the receipts of each candidate block.
 */
export class VerifiedLogReads {
  constructor(
    private readonly pool: UpstreamPool,
    readonly headers: TrustedHeaders,
    private readonly blocks: VerifiedBlockReads,
    private readonly limits: LogProofLimits = LOG_PROOF_LIMITS,
  ) {}

  async call(kind: NodeKind, params: unknown, idJson: string, opts: PoolCallOptions): Promise<Answer> {
    const filter = (Array.isArray(params) ? params[0] : undefined) as
      | { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown; address?: LogFilter['address']; topics?: LogFilter['topics'] }
      | undefined
    const range = filter === undefined || filter === null || typeof filter !== 'object' ? undefined : await this.#range(filter)
    if (range === undefined || range === 'unreadable') return this.#errorOrEmpty(kind, params, idJson, opts)
    const { top, from } = range
    const width = top.number - from + 1
    if (width > this.limits.maxBlocks) {
      throw new LogsRangeTooWide(REFUSED_BECAUSE.LOGS_RANGE_TOO_WIDE.BLOCKS({ blocks: width, max: this.limits.maxBlocks }))
    }
    const headers = await this.#linkedDown(kind, top, from, range.topNamedByHash ? 'client-named' : 'agreed', opts)
    const match: LogFilter = { address: filter!.address, topics: filter!.topics }
    const candidates = headers.filter((h) => bloomMayMatch(h.header.logsBloom, match))
    if (candidates.length > this.limits.maxCandidates) {
      throw new LogsRangeTooWide(REFUSED_BECAUSE.LOGS_RANGE_TOO_WIDE.CANDIDATES({ candidates: candidates.length, max: this.limits.maxCandidates }))
    }
    const expected: ProvenLog[] = []
    for (const header of candidates) {
      const { receipts } = await this.blocks.receipts(kind, header, opts)
      for (const receipt of receipts) {
        for (const log of receipt.logs) {
          const matched = logMatch(log, match)
          if (matched !== 'none') expected.push({ log, matched })
        }
      }
    }
    // Asked by hash or by the numbers the headers were linked for: the node answers for the same blocks.
    const asked = range.byHash ? { ...filter, blockHash: top.hash } : { ...filter, fromBlock: hex(from), toBlock: hex(top.number) }
    const call = { kind, method: 'eth_getLogs', params: [asked], minBlock: top.number, opts, notJson: 'LOGS_COMPLETE' as const }
    const answer = await firstPassing(this.pool, call, async (reply) => {
      if (reply.isError) return reply
      const logs = (JSON.parse(reply.text) as { result?: RpcLog[] }).result
      if (!Array.isArray(logs)) throw checkFailure('LOGS_NOT_A_LIST', { type: typeof logs })
      sameLogs(logs, expected)
      return reply
    })
    if (answer.isError) return answer.withId(idJson)
    const out = answer.withId(idJson)
    out.verifiedAt = top.hash
    return out
  }

  /** The range's top as a trusted header and its lowest number; 'unreadable' when the filter names blocks this gateway cannot read. */
  async #range(filter: {
    fromBlock?: unknown
    toBlock?: unknown
    blockHash?: unknown
  }): Promise<{ top: TrustedHeader; from: number; byHash: boolean; topNamedByHash: boolean } | 'unreadable' | undefined> {
    if (filter.blockHash !== undefined) {
      const ref = blockRefOf({ blockHash: filter.blockHash })
      if (ref === undefined) return 'unreadable'
      const top = await this.headers.at(ref)
      return top === null ? undefined : { top, from: top.number, byHash: true, topNamedByHash: true }
    }
    const toRef = blockRefOf(filter.toBlock ?? 'latest')
    const fromRef = blockRefOf(filter.fromBlock ?? 'latest')
    if (toRef === undefined || fromRef === undefined || ('tag' in toRef && toRef.tag === 'pending') || ('tag' in fromRef && fromRef.tag === 'pending')) {
      return 'unreadable'
    }
    const top = await this.headers.at(toRef)
    if (top === null) return undefined
    const from = 'number' in fromRef ? fromRef.number : (await this.headers.at(fromRef))?.number
    if (from === undefined || from > top.number) return 'unreadable'
    return { top, from, byHash: false, topNamedByHash: 'hash' in toRef }
  }

  /**
   * The headers from `from` up to `top`, each checked: its hash is keccak of its fields, and is its
   * child's parentHash (down from the trusted top). Fetched in parallel, then linked; a header that
   * does not link is asked of another node, and its node reported. Kept for later reads as
   * `linkedFrom` says (TrustedHeaders.remember): below a top the client named by hash, by hash only.
   */
  async #linkedDown(kind: NodeKind, top: TrustedHeader, from: number, linkedFrom: 'agreed' | 'client-named', opts: PoolCallOptions): Promise<TrustedHeader[]> {
    const numbers: number[] = []
    for (let n = top.number - 1; n >= from; n--) numbers.push(n)
    const fetched = await this.#headersOf(kind, numbers, opts)
    const out: TrustedHeader[] = [top]
    let expected = top.header.parentHash.toLowerCase() as Hex
    for (const [i, n] of numbers.entries()) {
      // Each header is a keccak of its fields (some 35 us): a range of 2,000 is 70 ms of CPU, given
      // back to the event loop every HEADER_BATCH headers so that other tenants' calls go on between.
      if (i > 0 && i % HEADER_BATCH === 0) await new Promise((resolve) => setImmediate(resolve))
      const kept = this.headers.kept(n)
      if (kept !== undefined && kept.hash === expected) {
        out.push(kept)
        expected = kept.header.parentHash.toLowerCase() as Hex
        continue
      }
      const first = fetched[i]
      const linked = (reply: Answer): TrustedHeader => {
        const header = (JSON.parse(reply.text) as { result?: RpcHeader | null }).result
        if (reply.isError || header === null || header === undefined) throw checkFailure('LINKED_HEADER_MISSING', { block: n, expected, none: 'no header' })
        const hash = verifyHeader(header)
        if (hash !== expected) throw checkFailure('PARENT_HASH_DIFFERS', { block: n, expected, hash })
        return { hash, number: n, stateRoot: header.stateRoot.toLowerCase() as Hex, header }
      }
      let header: TrustedHeader
      try {
        if (first === undefined) throw checkFailure('LINKED_HEADER_MISSING', { block: n, expected, none: 'no answer' })
        header = linked(first)
      } catch (err) {
        if (!(err instanceof VerificationError) && !(err instanceof SyntaxError)) throw err
        const by = first === undefined ? undefined : this.pool.nodes().find((node) => node.name === first.node)
        if (by !== undefined && err instanceof VerificationError && !/no header|no answer/.test(err.got)) this.pool.failedCheck(by, err.code)
        const avoid = new Set(opts.avoid)
        if (by !== undefined) avoid.add(by.name)
        const call = { kind, method: 'eth_getBlockByNumber', params: [hex(n), false], minBlock: n, opts: { ...opts, avoid }, notJson: 'HEADER_HASH' as const }
        header = await firstPassing(this.pool, call, async (reply) => linked(reply))
      }
      this.headers.remember(header, linkedFrom)
      out.push(header)
      expected = header.header.parentHash.toLowerCase() as Hex
    }
    return out.reverse()
  }

  /**
   * The headers of `numbers` not kept already (an earlier range's, or agreed), as the nodes give
   * them: in upstream batches of HEADER_BATCH, HEADER_BATCHES_AT_ONCE at a time, so that a range of
   * 2,000 blocks is 20 requests, never 2,000 at once. Unchecked here (#linkedDown checks each
   * against its child's parentHash); undefined where a batch failed or left a call out.
   */
  async #headersOf(kind: NodeKind, numbers: readonly number[], opts: PoolCallOptions): Promise<Array<Answer | undefined>> {
    const out = new Array<Answer | undefined>(numbers.length)
    const missing = numbers.flatMap((n, i) => (this.headers.kept(n) === undefined ? [i] : []))
    let next = 0
    const worker = async (): Promise<void> => {
      while (next < missing.length) {
        const part = missing.slice(next, next + HEADER_BATCH)
        next += HEADER_BATCH
        const calls = part.map((i) => ({ method: 'eth_getBlockByNumber', params: [hex(numbers[i]!), false], idJson: '0' }))
        const answers = await this.pool.callBatch(kind, calls, { ...opts, checked: true }).catch(() => [])
        for (const [j, i] of part.entries()) out[i] = answers[j]
      }
    }
    await Promise.all(Array.from({ length: Math.min(HEADER_BATCHES_AT_ONCE, Math.ceil(missing.length / HEADER_BATCH)) }, worker))
    return out
  }

  /** A filter naming no block this gateway can check (pending, malformed, a block no node has): only an error or no logs is handed on. */
  #errorOrEmpty(kind: NodeKind, params: unknown, idJson: string, opts: PoolCallOptions): Promise<Answer> {
    const refused = () => checkFailure('LOGS_NOT_CHECKABLE', {})
    return harmlessOnly(this.pool, { kind, method: 'eth_getLogs', params, idJson, opts }, (a) => /"result"\s*:\s*\[\s*\]/.test(a.text), refused)
  }
}

/** A log of the proven receipts that matches the filter under some client's rule, and which clients' (LogMatch). */
interface ProvenLog {
  log: RpcLog
  matched: Exclude<LogMatch, 'none'>
}

/**
 * The node's logs are the proven ones, in order (the same block, transaction, index, address,
 * topics and data): every log that every client's rule matches is there, and every log there is
 * one some client's rule matches. A log only some clients match (fewer topics than the filter has
 * positions, the positions past them wildcards) may be there or not: whether it is depends on the
 * node's client, not on its honesty, and a node is never counted for its client's rule.
 */
function sameLogs(got: readonly RpcLog[], expected: readonly ProvenLog[]): void {
  const key = (l: RpcLog) =>
    [l.blockHash, l.transactionHash, l.logIndex, l.transactionIndex, l.address, l.topics.join(','), l.data].map((v) => String(v).toLowerCase()).join('|')
  const everyClient = expected.filter((e) => e.matched === 'every-client').length
  let next = 0
  got.forEach((log, i) => {
    const k = key(log)
    // The next proven log it can be: past only logs a client's rule may leave out.
    let at = next
    while (at < expected.length && key(expected[at]!.log) !== k && expected[at]!.matched === 'some-client') at++
    const want = expected[at]
    if (want === undefined || key(want.log) !== k) {
      const left = expected.slice(next).find((e) => e.matched === 'every-client')
      throw checkFailure('LOG_NOT_PROVEN', { index: i, proven: left === undefined ? undefined : key(left.log), log: k })
    }
    next = at + 1
  })
  const missing = expected.slice(next).filter((e) => e.matched === 'every-client').length
  if (missing > 0) {
    throw checkFailure('LOGS_LEFT_OUT', { everyClient, missing })
  }
}

function hex(n: number): string {
  return `0x${n.toString(16)}`
}
