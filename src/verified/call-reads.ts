import { createCustomCommon, Hardfork, Mainnet } from '@ethereumjs/common'
import { createEVM } from '@ethereumjs/evm'
import { SimpleStateManager } from '@ethereumjs/statemanager'
import { Account, type Address, createAddressFromString } from '@ethereumjs/util'
import { bytesToHex, hexToBytes, numberToHex } from 'viem'
import type { NodeKind } from '../core/node-kind.js'
import type { Answer } from '../upstream/answer.js'
import type { PoolCallOptions, UpstreamPool } from '../upstream/pool.js'
import { VerificationError } from '../verify/errors.js'
import type { Hex, RpcAccountProof } from '../verify/rpc-shapes.js'
import { codeAnswer } from '../verify/state-answers.js'
import { EMPTY_CODE_HASH, type ProvenAccount, slotKey, verifyStateProof } from '../verify/state-proof.js'
import { blockRefOf } from './block-ref.js'
import { firstPassing, harmlessOnly } from './first-passing.js'
import type { TrustedHeader, TrustedHeaders } from './trusted-headers.js'

/** Rounds of "prove what the run touched that was not proven yet, run again" before giving up. */
const MAX_ROUNDS = 4
/** Accounts and slots one verified call may prove (each a node call). */
const MAX_PROVEN = 64

interface CallObject {
  from?: Hex
  to?: Hex | null
  data?: Hex
  input?: Hex
  value?: Hex
  gas?: Hex
}

/** What the proven state was asked for that it did not hold: the run is repeated with it proven. */
class ProvenState extends SimpleStateManager {
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
 * eth_call verified (networks.<slug>.verify: calls; docs/verified-answers.md): the call is run by
 * the gateway, in an EVM (@ethereumjs/evm), on state proven against the trusted header: every
 * account and slot the run reads is proven with eth_getProof (a node's eth_createAccessList is only
 * a first guess; what the run reads beyond it is proven and the run repeated), code against its
 * proven code hash. A node's eth_call answer is handed on only when it is what the run returned (or
 * the same revert). As Helios and the Lodestar prover do, for a multi-tenant gateway.
 * Not proven: BLOCKHASH (the EVM has no chain of block hashes here: a call that reads one may fail
 * the check), and a call's gas (the answer is its return data).
 */
export class VerifiedCalls {
  constructor(
    private readonly pool: UpstreamPool,
    readonly headers: TrustedHeaders,
  ) {}

  async call(kind: NodeKind, params: unknown, idJson: string, opts: PoolCallOptions): Promise<Answer> {
    const list = Array.isArray(params) ? params : []
    const tx = list[0] as CallObject | undefined
    const ref = blockRefOf(list[1] ?? 'latest')
    if (tx === null || typeof tx !== 'object' || ref === undefined || ('tag' in ref && ref.tag === 'pending'))
      return this.#errorOnly(kind, params, idJson, opts)
    const header = await this.headers.at(ref)
    if (header === null) return this.#errorOnly(kind, params, idJson, opts)
    const run = await this.#run(kind, tx, header, opts)
    const call = { kind, method: 'eth_call', params: [tx, { blockHash: header.hash }], minBlock: header.number, opts, notJson: 'CALL_RESULT' as const }
    const answer = await firstPassing(this.pool, call, async (reply) => {
      const body = JSON.parse(reply.text) as { result?: unknown; error?: { data?: unknown } }
      const same = reply.isError ? run.reverted && sameHex(body.error?.data, run.returned) : !run.reverted && sameHex(body.result, run.returned)
      if (!same) {
        throw new VerificationError(
          'CALL_RESULT',
          'eth_call',
          `${run.reverted ? 'a revert with' : 'the return data'} ${run.returned} (run on proven state)`,
          reply.isError ? `an error with ${String(body.error?.data)}` : String(body.result),
        )
      }
      return reply
    })
    const out = answer.withId(idJson)
    out.verifiedAt = header.hash
    return out
  }

  /** The call run on proven state: its return data, and whether it reverted. */
  async #run(kind: NodeKind, tx: CallObject, header: TrustedHeader, opts: PoolCallOptions): Promise<{ reverted: boolean; returned: Hex }> {
    const h = header.header as typeof header.header & { miner: Hex; timestamp: Hex; gasLimit: Hex; mixHash?: Hex; difficulty?: Hex }
    const common = createCustomCommon({ chainId: this.pool.chainId }, Mainnet, { hardfork: Hardfork.Prague })
    const state = new ProvenState({ common })
    const from = (tx.from ?? `0x${'00'.repeat(20)}`).toLowerCase()
    const want = new Map<string, Set<string>>([
      [from, new Set()],
      [h.miner.toLowerCase(), new Set()],
    ])
    if (tx.to) want.set(tx.to.toLowerCase(), new Set())
    // A first guess of what the call reads, from a node: every entry is proven, none is trusted.
    const hint = await this.pool.call(kind, 'eth_createAccessList', [tx, { blockHash: header.hash }], '0', { ...opts, checked: true }).catch(() => undefined)
    if (hint !== undefined && !hint.isError) {
      const entries = (JSON.parse(hint.text) as { result?: { accessList?: { address: string; storageKeys: string[] }[] } }).result?.accessList ?? []
      for (const e of entries.slice(0, MAX_PROVEN)) {
        const slots = want.get(e.address.toLowerCase()) ?? new Set()
        for (const k of e.storageKeys) slots.add(slotKey(k as Hex))
        want.set(e.address.toLowerCase(), slots)
      }
    }
    for (let round = 0; ; round++) {
      await this.#prove(kind, want, state, header, opts)
      state.missing.clear()
      const evm = await createEVM({ common, stateManager: state })
      const result = await evm.runCall({
        caller: createAddressFromString(from),
        origin: createAddressFromString(from),
        to: tx.to ? createAddressFromString(tx.to) : undefined,
        data: hexToBytes((tx.data ?? tx.input ?? '0x') as Hex),
        value: tx.value === undefined ? 0n : BigInt(tx.value),
        gasLimit: tx.gas === undefined ? BigInt(h.gasLimit) : BigInt(tx.gas),
        skipBalance: true,
        block: {
          header: {
            number: BigInt(header.number),
            coinbase: createAddressFromString(h.miner),
            timestamp: BigInt(h.timestamp),
            difficulty: BigInt(h.difficulty ?? '0x0'),
            prevRandao: hexToBytes(h.mixHash ?? `0x${'00'.repeat(32)}`),
            gasLimit: BigInt(h.gasLimit),
            baseFeePerGas: h.baseFeePerGas === undefined ? undefined : BigInt(h.baseFeePerGas),
            getBlobGasPrice: () => 1n,
          },
        },
      })
      if (state.missing.size === 0) {
        const returned = bytesToHex(result.execResult.returnValue)
        return { reverted: result.execResult.exceptionError !== undefined, returned }
      }
      if (round + 1 >= MAX_ROUNDS)
        throw new VerificationError('CALL_RESULT', 'eth_call', 'a run on proven state', `state read beyond ${MAX_ROUNDS} rounds of proofs`)
      for (const [address, slots] of state.missing) {
        const mine = want.get(address) ?? new Set()
        for (const s of slots) mine.add(s)
        want.set(address, mine)
      }
      let proven = 0
      for (const slots of want.values()) proven += 1 + slots.size
      if (proven > MAX_PROVEN) throw new VerificationError('CALL_RESULT', 'eth_call', `at most ${MAX_PROVEN} accounts and slots proven`, `${proven}`)
    }
  }

  /** Prove each wanted account and slot not proven yet into the state, code included. */
  async #prove(kind: NodeKind, want: Map<string, Set<string>>, state: ProvenState, header: TrustedHeader, opts: PoolCallOptions): Promise<void> {
    await Promise.all(
      [...want].map(async ([address, wanted]) => {
        const known = state.slots.get(address) ?? new Set<string>()
        const slots = [...wanted].filter((s) => !known.has(s))
        if (state.accounts.has(address) && slots.length === 0) return
        const params = [address, slots, { blockHash: header.hash }]
        const account = await firstPassing(this.pool, { kind, method: 'eth_getProof', params, minBlock: header.number, opts }, async (reply) => {
          const proof = (JSON.parse(reply.text) as { result?: RpcAccountProof }).result
          if (reply.isError || proof === undefined) throw new VerificationError('ACCOUNT_PROOF', address, 'an eth_getProof result', 'none')
          return verifyStateProof(proof, header.stateRoot, { address: address as Hex, storageKeys: slots as Hex[] })
        })
        await this.#put(kind, state, account, slots, header, opts)
      }),
    )
  }

  async #put(kind: NodeKind, state: ProvenState, account: ProvenAccount, slots: string[], header: TrustedHeader, opts: PoolCallOptions): Promise<void> {
    const address = createAddressFromString(account.address)
    if (!state.accounts.has(account.address)) {
      state.accounts.add(account.address)
      if (account.exists) {
        await state.putAccount(address, new Account(account.nonce, account.balance, hexToBytes(account.storageHash), hexToBytes(account.codeHash)))
        if (account.codeHash !== EMPTY_CODE_HASH) {
          const params = [account.address, { blockHash: header.hash }]
          const code = await firstPassing(
            this.pool,
            { kind, method: 'eth_getCode', params, minBlock: header.number, opts, notJson: 'CODE_HASH' },
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

  /** A call at a block this gateway cannot check: only a node's error goes on. */
  #errorOnly(kind: NodeKind, params: unknown, idJson: string, opts: PoolCallOptions): Promise<Answer> {
    const refused = () => new VerificationError('CALL_RESULT', 'eth_call', 'a call at a block the nodes agree on', 'pending, or a block no node agreed on')
    return harmlessOnly(this.pool, { kind, method: 'eth_call', params, idJson, opts }, () => false, refused)
  }
}

function sameHex(a: unknown, b: string): boolean {
  return typeof a === 'string' && a.toLowerCase() === b.toLowerCase()
}
