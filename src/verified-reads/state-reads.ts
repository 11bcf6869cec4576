import type { NodeKind } from '../core/node-kind.js'
import { REFUSED_BECAUSE } from '../errors/messages.js'
import { PASSED_OVER_BECAUSE, UNVERIFIED_BECAUSE } from '../errors/problem-words.js'
import { Answer } from '../upstream/answer.js'
import type { PoolCallOptions, UpstreamPool } from '../upstream/pool.js'
import { checkFailure } from '../proofs/check-failure.js'
import type { Hex, RpcAccountProof } from '../proofs/rpc-shapes.js'
import { balanceAnswer, codeAnswer, storageAtAnswer, transactionCountAnswer } from '../proofs/state-answers.js'
import { type ProvenAccount, slotKey, verifyStateProof } from '../proofs/state-proof.js'
import { blockRefOf } from './block-ref.js'
import { askedByNumber, ofTrustedBlock } from './by-number.js'
import { firstPassing, harmlessOnly } from './first-passing.js'
import { AnswerUnverified, PassOver } from './errors.js'
import type { TrustedHeader, TrustedHeaders } from './trusted-headers.js'
import { ProofTooWide } from './errors.js'

/** Where each state read keeps its address, its storage slots and its block (params' indexes). */
const STATE_READS: Readonly<Record<string, { slots?: number; slot?: number; block: number }>> = {
  eth_getBalance: { block: 1 },
  eth_getTransactionCount: { block: 1 },
  eth_getCode: { block: 1 },
  eth_getStorageAt: { slot: 1, block: 2 },
  eth_getProof: { slots: 1, block: 2 },
}

/**
 * Proven accounts kept, by block hash, address and slots: a block's hash pins its state, so the
 * same read of the same block (a hot address at `latest`, read by many clients within a block) is
 * answered from what was proven, without a node call or a check. About 2 KB each for an account
 * alone; a proof of many slots is far more (about 2.9 KB a slot of a busy contract).
 */
const PROVEN_KEPT = 4_096
/**
 * And at most this many bytes of kept answers: counted in count alone, 12 proofs of 4,000 slots
 * (11.5 MB each) were all kept and the process grew by 360 MB. The oldest go first.
 */
export const PROVEN_KEPT_BYTES = 16 * 1024 * 1024
/**
 * The storage slots one verified eth_getProof may name: each is a proof to check on the event
 * loop (about 0.15 ms a slot) and its part of a kept answer; 256 slots of a busy contract are
 * about 0.75 MB, well inside PROVEN_KEPT_BYTES. More slots: several calls of fewer each.
 */
export const MAX_PROOF_SLOTS = 256

/** Whether `verify: reads` proves this method's answers (the rest go as they are). */
export function isVerifiedStateRead(method: string): boolean {
  return Object.hasOwn(STATE_READS, method)
}

/**
 * State reads proven against a trusted header (networks.<slug>.verify: reads; docs/verified-answers.md).
 * Each read costs one `eth_getProof` at the header's hash (eth_getCode: and the code), checked
 * against its stateRoot, and is answered in the method's own format from the proven account, as
 * an honest node answers it (eth_getProof: the node's answer, once checked). An answer that fails
 * a check is never handed on: the node is reported (`failedCheck`), and the read goes to another
 * node; when none is left, AnswerUnverified. `pending` has no header: it goes to a node as it is.
 * @example
 * const out = await reads.call('full', 'eth_getBalance', [address, 'latest'], '1', { timeoutMs: 5000 })
 * out.verifiedAt // the hash of the header two of three nodes agreed on
 */
export class VerifiedStateReads {
  /** Proofs checked (or being checked) by block, address and slots; oldest dropped first (PROVEN_KEPT, PROVEN_KEPT_BYTES). */
  readonly #kept = new Map<string, Promise<{ account?: ProvenAccount; answer: Answer }>>()
  /** The bytes of each kept proof once checked (one still being checked holds no answer yet). */
  readonly #keptSizes = new Map<string, number>()
  #keptBytes = 0
  /** Reads answered from #kept, for the tests and the cost docs. */
  keptReads = 0
  constructor(
    private readonly pool: UpstreamPool,
    readonly headers: TrustedHeaders,
  ) {}

  async call(kind: NodeKind, method: string, params: unknown, idJson: string, opts: PoolCallOptions): Promise<Answer> {
    const where = STATE_READS[method]!
    const list = Array.isArray(params) ? params : []
    const ref = blockRefOf(list[where.block])
    if (ref !== undefined && 'tag' in ref && ref.tag === 'pending') return this.pool.call({ ...opts, kind, method, params, idJson })
    const address = list[0]
    if (method === 'eth_getProof' && Array.isArray(list[1]) && list[1].length > MAX_PROOF_SLOTS) {
      throw new ProofTooWide(REFUSED_BECAUSE.PROOF_TOO_WIDE.SLOTS({ slots: list[1].length, max: MAX_PROOF_SLOTS }))
    }
    // eth_getStorageAt takes a slot as a quantity ("0x0"); eth_getProof wants the 32-byte word.
    const slots = where.slots !== undefined ? list[where.slots] : where.slot !== undefined ? [asSlotWord(list[where.slot])] : []
    if (ref === undefined || typeof address !== 'string' || !Array.isArray(slots) || slots.some((s) => typeof s !== 'string')) {
      // Not a read this gateway can name a block or an account for: only the node's error is handed on.
      return this.#errorOnly({ kind, method, params, idJson, opts })
    }
    const header = await this.headers.at(ref)
    if (header === null) return this.#errorOnly({ kind, method, params, idJson, opts })
    const { account, answer } = await this.#proven(kind, address as Hex, slots as Hex[], header, opts)
    if (account === undefined) return answer.withId(idJson)
    let out: Answer
    if (method === 'eth_getProof') out = answer.withId(idJson)
    else {
      const result =
        method === 'eth_getBalance'
          ? balanceAnswer(account)
          : method === 'eth_getTransactionCount'
            ? transactionCountAnswer(account)
            : method === 'eth_getStorageAt'
              ? storageAtAnswer(account, slots[0] as Hex)
              : await this.#code(kind, account, header, answer.node, opts)
      out = Answer.ofText(`{"jsonrpc":"2.0","id":${idJson},"result":"${result}"}`, false, answer.node, kind)
      out.attempts = answer.attempts
    }
    out.verifiedAt = header.hash
    return out
  }

  /** One node's eth_getProof at the header, checked (or as checked before, for this block: #kept); another node's while one fails. */
  #proven(kind: NodeKind, address: Hex, slots: Hex[], header: TrustedHeader, opts: PoolCallOptions): Promise<{ account?: ProvenAccount; answer: Answer }> {
    const key = `${header.hash}|${address.toLowerCase()}|${slots.join(',').toLowerCase()}|${kind}`
    const kept = this.#kept.get(key)
    if (kept !== undefined) {
      this.keptReads++
      return kept
    }
    const proven = this.#prove(kind, address, slots, header, opts)
    if (this.#kept.size >= PROVEN_KEPT) this.#forget(this.#kept.keys().next().value!)
    this.#kept.set(key, proven)
    // A failure, or a node's error (no value proven), is not kept: the next read asks again.
    proven.then(
      (p) => {
        if (this.#kept.get(key) !== proven) return // dropped meanwhile
        if (p.account === undefined) return this.#forget(key)
        this.#keep(key, p.answer)
      },
      () => {
        if (this.#kept.get(key) === proven) this.#forget(key)
      },
    )
    return proven
  }

  /** Bytes of checked proofs kept now (at most PROVEN_KEPT_BYTES), for /metrics and the tests. */
  get keptBytes(): number {
    return this.#keptBytes
  }

  /** Count a checked proof's bytes, then drop the oldest until the kept ones fit PROVEN_KEPT_BYTES. */
  #keep(key: string, answer: Answer): void {
    // An answer kept as bytes holds the text the check decoded from them too.
    const size = answer.bytes !== undefined ? 2 * answer.size : answer.size
    this.#keptSizes.set(key, size)
    this.#keptBytes += size
    for (const oldest of this.#kept.keys()) {
      if (this.#keptBytes <= PROVEN_KEPT_BYTES) break
      this.#forget(oldest)
    }
  }

  #forget(key: string): void {
    this.#kept.delete(key)
    this.#keptBytes -= this.#keptSizes.get(key) ?? 0
    this.#keptSizes.delete(key)
  }

  #prove(kind: NodeKind, address: Hex, slots: Hex[], header: TrustedHeader, opts: PoolCallOptions): Promise<{ account?: ProvenAccount; answer: Answer }> {
    const params = [address, slots, { blockHash: header.hash }]
    const proven = async (answer: Answer) => {
      const proof = (JSON.parse(answer.text) as { result?: RpcAccountProof }).result
      if (proof === undefined || proof === null) throw checkFailure('NO_PROOF', { address })
      return { account: await verifyStateProof(proof, header.stateRoot, { address, storageKeys: slots }), answer }
    }
    const call = { kind, method: 'eth_getProof', params, minBlock: header.number, opts, errorsChecked: true }
    return firstPassing(this.pool, call, async (answer) => {
      if (!answer.isError) return proven(answer)
      const numbered = await askedByNumber(this.pool, kind, 'eth_getProof', [address, slots], header, answer.node, opts)
      // A node that cannot prove (pruned state, no such block) says so: its error is handed on (an
      // error is no value; the dispatcher's archive retry reads a pruned one as it is).
      if (numbered.isError) return { answer: numbered }
      return ofTrustedBlock(this.pool, kind, header, numbered.node, opts, () => proven(numbered))
    })
  }

  /** eth_getCode at the header, checked against the proven code hash; from the prover first, then others. */
  #code(kind: NodeKind, account: ProvenAccount, header: TrustedHeader, prover: string, opts: PoolCallOptions): Promise<Hex> {
    const params = [account.address, { blockHash: header.hash }]
    const checked = (answer: Answer) => codeAnswer((JSON.parse(answer.text) as { result: Hex }).result, account)
    const call = { kind, method: 'eth_getCode', params, minBlock: header.number, opts, first: prover, notJson: 'CODE_HASH' as const, errorsChecked: true }
    return firstPassing(this.pool, call, async (answer) => {
      if (!answer.isError) return checked(answer)
      const numbered = await askedByNumber(this.pool, kind, 'eth_getCode', [account.address], header, answer.node, opts)
      // An error is no code: the node is passed over (never counted); every node's error is the answer.
      if (numbered.isError) throw new PassOver(PASSED_OVER_BECAUSE.NODE_ERRED({ method: 'eth_getCode' }), numbered)
      return ofTrustedBlock(this.pool, kind, header, numbered.node, opts, async () => checked(numbered))
    })
  }

  /** The call as the client sent it, where only a node's error may be handed on (no block to check a value against). */
  #errorOnly(call: { kind: NodeKind; method: string; params: unknown; idJson: string; opts: PoolCallOptions }): Promise<Answer> {
    return harmlessOnly(
      this.pool,
      call,
      () => false,
      () => new AnswerUnverified(UNVERIFIED_BECAUSE.BLOCK_NOT_CHECKABLE({ method: call.method })),
    )
  }
}

/** A storage slot as eth_getProof's 32-byte key, or undefined when it is no quantity (the node's error answers it). */
function asSlotWord(slot: unknown): Hex | undefined {
  if (typeof slot !== 'string' || !/^0x[0-9a-fA-F]{1,64}$/.test(slot)) return undefined
  return slotKey(slot as Hex)
}
