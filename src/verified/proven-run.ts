import { createCustomCommon, type Common, Hardfork, Mainnet } from '@ethereumjs/common'
import { SimpleStateManager } from '@ethereumjs/statemanager'
import { Account, type Address, createAddressFromString } from '@ethereumjs/util'
import { bytesToHex, hexToBytes, numberToHex } from 'viem'
import type { NodeKind } from '../core/node-kind.js'
import type { PoolCallOptions, UpstreamPool } from '../upstream/pool.js'
import { VerificationError, type VerifyCheck } from '../verify/errors.js'
import type { Hex, RpcAccountProof, RpcHeader } from '../verify/rpc-shapes.js'
import { codeAnswer } from '../verify/state-answers.js'
import { EMPTY_CODE_HASH, type ProvenAccount, slotKey, verifyStateProof } from '../verify/state-proof.js'
import { type BlockRef, blockRefOf } from './block-ref.js'
import { ProvenBlockHashes } from './block-hashes.js'
import { firstPassing } from './first-passing.js'
import type { TrustedHeader } from './trusted-headers.js'

/** Rounds of "prove what the run touched that was not proven yet, run again" before giving up. */
const MAX_ROUNDS = 4
/** Accounts and slots one verified run may prove (each a node call). */
const MAX_PROVEN = 64

/** A call object as eth_call and eth_estimateGas take it (the fields a run reads). */
export interface CallObject {
  from?: Hex
  to?: Hex | null
  data?: Hex
  input?: Hex
  value?: Hex
  gas?: Hex
  accessList?: { address: Hex; storageKeys: Hex[] }[]
}

/**
 * The call object and the block of eth_call's or eth_estimateGas's params, or undefined when there
 * is nothing a run here can check (no object, a block parameter it cannot read, `pending`).
 */
export function callAt(params: unknown): { tx: CallObject & Record<string, unknown>; ref: BlockRef } | undefined {
  const list = Array.isArray(params) ? params : []
  const tx = list[0] as (CallObject & Record<string, unknown>) | undefined
  const ref = blockRefOf(list[1] ?? 'latest')
  if (tx === null || typeof tx !== 'object' || ref === undefined || ('tag' in ref && ref.tag === 'pending')) return undefined
  return { tx, ref }
}

/** The header fields a run needs beyond the proven ones. */
export type RunHeader = RpcHeader & { miner: Hex; timestamp: Hex; gasLimit: Hex; mixHash?: Hex; difficulty?: Hex }

/** What the proven state was asked for that it did not hold: the run is repeated with it proven. */
export class ProvenState extends SimpleStateManager {
  readonly accounts = new Set<string>()
  readonly slots = new Map<string, Set<string>>()
  readonly missing = new Map<string, Set<string>>()

  override async getAccount(address: Address): Promise<Account | undefined> {
    const a = address.toString().toLowerCase()
    if (!this.accounts.has(a) && !isPrecompile(a)) this.#miss(a)
    return super.getAccount(address)
  }

  override async getStorage(address: Address, key: Uint8Array): Promise<Uint8Array> {
    const a = address.toString().toLowerCase()
    const slot = bytesToHex(key)
    if (!this.slots.get(a)?.has(slot)) this.#miss(a, slot)
    return super.getStorage(address, key)
  }

  #miss(address: string, slot?: string): void {
    let slots = this.missing.get(address)
    if (slots === undefined) this.missing.set(address, (slots = new Set()))
    if (slot !== undefined) slots.add(slot)
  }
}

function isPrecompile(address: string): boolean {
  return /^0x0{36}[0-9a-f]{4}$/.test(address) && Number.parseInt(address.slice(-4), 16) <= 0x100
}

/**
 * A call run by the gateway on state proven against a trusted header (docs/verified-answers.md):
 * every account and slot the run reads is proven with eth_getProof (a node's eth_createAccessList
 * is only a first guess; what a run reads beyond it is proven and the run repeated, at most
 * MAX_ROUNDS times and MAX_PROVEN accounts and slots), code against its proven code hash. The
 * proven state is kept for the runs of one client call (eth_estimateGas runs twice).
 * @example
 * const run = await ProvenRun.prepare(pool, kind, tx, header, opts, 'CALL_RESULT', 'eth_call')
 * const out = await run.until((state) => execute(state))
 */
export class ProvenRun {
  readonly common: Common
  readonly state: ProvenState
  /** BLOCKHASH's answers: the hashes below the trusted header, linked to it by parent hashes. */
  readonly blockHashes: ProvenBlockHashes
  readonly header: RunHeader
  readonly from: string
  readonly #want: Map<string, Set<string>>

  private constructor(
    private readonly pool: UpstreamPool,
    private readonly kind: NodeKind,
    readonly trusted: TrustedHeader,
    tx: CallObject,
    private readonly opts: PoolCallOptions,
    private readonly check: VerifyCheck,
    private readonly method: string,
  ) {
    this.header = trusted.header as RunHeader
    this.common = createCustomCommon({ chainId: pool.chainId }, Mainnet, { hardfork: Hardfork.Prague })
    this.state = new ProvenState({ common: this.common })
    this.blockHashes = new ProvenBlockHashes({ pool, timeoutMs: opts.timeoutMs, counts: { calls: 0 } }, trusted)
    this.from = (tx.from ?? `0x${'00'.repeat(20)}`).toLowerCase()
    this.#want = new Map([
      [this.from, new Set()],
      [this.header.miner.toLowerCase(), new Set()],
    ])
    if (tx.to) this.#want.set(tx.to.toLowerCase(), new Set())
  }

  /** A run of `tx` at `trusted`, with a node's access list as the first guess of what it reads. */
  static async prepare(
    pool: UpstreamPool,
    kind: NodeKind,
    tx: CallObject,
    trusted: TrustedHeader,
    opts: PoolCallOptions,
    check: VerifyCheck,
    method: string,
  ): Promise<ProvenRun> {
    const run = new ProvenRun(pool, kind, trusted, tx, opts, check, method)
    const hint = await pool.call(kind, 'eth_createAccessList', [tx, { blockHash: trusted.hash }], '0', { ...opts, checked: true }).catch(() => undefined)
    if (hint !== undefined && !hint.isError) {
      const entries = (JSON.parse(hint.text) as { result?: { accessList?: { address: string; storageKeys: string[] }[] } }).result?.accessList ?? []
      for (const e of entries.slice(0, MAX_PROVEN)) run.#wantAll(e.address, e.storageKeys)
    }
    for (const e of tx.accessList ?? []) run.#wantAll(e.address, e.storageKeys)
    return run
  }

  /** `execute` on proven state, proving what it read beyond it and running it again, until it read nothing unproven. */
  async until<T>(execute: (state: ProvenState) => Promise<T>): Promise<T> {
    for (let round = 0; ; round++) {
      await this.#prove()
      this.state.missing.clear()
      // Each round runs on the proven state as it was proven: what a round wrote (a slot, a nonce
      // a creation raised, the account it made) is undone, or the next round would run on it.
      await this.state.checkpoint()
      let out: T
      try {
        out = await execute(this.state)
      } finally {
        await this.state.revert()
      }
      if (this.state.missing.size === 0) return out
      if (round + 1 >= MAX_ROUNDS)
        throw new VerificationError(this.check, this.method, 'a run on proven state', `state read beyond ${MAX_ROUNDS} rounds of proofs`)
      for (const [address, slots] of this.state.missing) this.#wantAll(address, [...slots], false)
      let proven = 0
      for (const slots of this.#want.values()) proven += 1 + slots.size
      if (proven > MAX_PROVEN) throw new VerificationError(this.check, this.method, `at most ${MAX_PROVEN} accounts and slots proven`, `${proven}`)
    }
  }

  /** The block a run is in: the trusted header's fields (the blob gas price is not proven: 1). */
  blockFields() {
    const h = this.header
    return {
      number: BigInt(this.trusted.number),
      coinbase: createAddressFromString(h.miner),
      timestamp: BigInt(h.timestamp),
      difficulty: BigInt(h.difficulty ?? '0x0'),
      prevRandao: hexToBytes(h.mixHash ?? `0x${'00'.repeat(32)}`),
      gasLimit: BigInt(h.gasLimit),
      baseFeePerGas: h.baseFeePerGas === undefined ? undefined : BigInt(h.baseFeePerGas),
    }
  }

  #wantAll(address: string, storageKeys: readonly string[], asKeys = true): void {
    const a = address.toLowerCase()
    const slots = this.#want.get(a) ?? new Set()
    for (const k of storageKeys) slots.add(asKeys ? slotKey(k as Hex) : k)
    this.#want.set(a, slots)
  }

  /** Prove each wanted account and slot not proven yet into the state, code included. */
  async #prove(): Promise<void> {
    const { kind, opts, trusted, state } = this
    await Promise.all(
      [...this.#want].map(async ([address, wanted]) => {
        const known = state.slots.get(address) ?? new Set<string>()
        const slots = [...wanted].filter((s) => !known.has(s))
        if (state.accounts.has(address) && slots.length === 0) return
        const params = [address, slots, { blockHash: trusted.hash }]
        const account = await firstPassing(this.pool, { kind, method: 'eth_getProof', params, minBlock: trusted.number, opts }, async (reply) => {
          const proof = (JSON.parse(reply.text) as { result?: RpcAccountProof }).result
          if (reply.isError || proof === undefined) throw new VerificationError('ACCOUNT_PROOF', address, 'an eth_getProof result', 'none')
          return verifyStateProof(proof, trusted.stateRoot, { address: address as Hex, storageKeys: slots as Hex[] })
        })
        await this.#put(account, slots)
      }),
    )
  }

  async #put(account: ProvenAccount, slots: string[]): Promise<void> {
    const { kind, opts, trusted, state } = this
    const address = createAddressFromString(account.address)
    if (!state.accounts.has(account.address)) {
      state.accounts.add(account.address)
      if (account.exists) {
        await state.putAccount(address, new Account(account.nonce, account.balance, hexToBytes(account.storageHash), hexToBytes(account.codeHash)))
        if (account.codeHash !== EMPTY_CODE_HASH) {
          const params = [account.address, { blockHash: trusted.hash }]
          const code = await firstPassing(
            this.pool,
            { kind, method: 'eth_getCode', params, minBlock: trusted.number, opts, notJson: 'CODE_HASH' },
            async (reply) => codeAnswer((JSON.parse(reply.text) as { result: Hex }).result, account),
          )
          await state.putCode(address, hexToBytes(code))
        }
      }
    }
    let known = state.slots.get(account.address)
    if (known === undefined) state.slots.set(account.address, (known = new Set()))
    for (const slot of slots) {
      known.add(slot)
      const value = account.storage.get(slotKey(slot as Hex)) ?? 0n
      if (value !== 0n && account.exists) await state.putStorage(address, hexToBytes(slot as Hex), hexToBytes(numberToHex(value)))
    }
  }
}
