import { bytesToHex } from 'viem'
import type { NodeKind } from '../core/node-kind.js'
import type { Answer } from '../upstream/answer.js'
import type { PoolCallOptions, UpstreamPool } from '../upstream/pool.js'
import { REFUSED_BECAUSE } from '../errors/messages.js'
import { PASSED_OVER_BECAUSE } from '../errors/problem-words.js'
import { checkFailure } from '../proofs/check-failure.js'
import type { Hex, RpcAccountProof, RpcHeader } from '../proofs/rpc-shapes.js'
import { codeAnswer } from '../proofs/state-answers.js'
import { EMPTY_CODE_HASH, type ProvenAccount, slotKey, verifyStateProof } from '../proofs/state-proof.js'
import { type BlockRef, blockRefOf } from './block-ref.js'
import { ProvenBlockHashes } from './block-hashes.js'
import { askedByNumber, ofTrustedBlock } from './by-number.js'
import type { EvmRunner } from './evm-workers.js'
import { EvmRunTimeout } from './errors.js'
import type { ProvenSnapshot, RunBlock, RunJob, RunOutcome, RunTx, SnapshotAccount } from './evm-run.js'
import { firstPassing } from './first-passing.js'
import { PassOver } from './errors.js'
import { nodesLackOf } from './nodes-lack.js'
import type { TrustedHeader } from './trusted-headers.js'
import { RunRefused } from './errors.js'

/** Rounds of "prove what the run touched that was not proven yet, run again" before giving up. */
const MAX_ROUNDS = 4
/** Accounts and slots one verified run may prove (each a node call). */
export const MAX_PROVEN = 64
/** Units a verified call is charged per million gas the gateway's EVM ran for it (docs/costs.md). */
export const UNITS_PER_MILLION_GAS = 10

/** The units of work of `gas` run by the gateway's EVM, beyond the method's own (docs/costs.md): 10 per whole million. */
export function unitsOfGas(gas: bigint): number {
  return Number(gas / 1_000_000n) * UNITS_PER_MILLION_GAS
}

/** What the gateway's EVM may run for one call (networks.<slug>.verify: calls). */
export interface EvmLimits {
  runner: EvmRunner
  /** evm.gasCap: the most gas one run is given, read at each run (a reload may change it). */
  gasCap(): bigint
}

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

/**
 * A call run by the gateway on state proven against a trusted header (docs/verified-answers.md):
 * every account and slot the run reads is proven with eth_getProof (a node's eth_createAccessList
 * is only a first guess; what a run reads beyond it is proven and the run repeated, at most
 * MAX_ROUNDS times), code against its proven code hash, and each block hash BLOCKHASH reads linked
 * to the trusted header (ProvenBlockHashes). At most MAX_PROVEN accounts and slots, counted before
 * anything is proven: the client's access list first (over the bound: refused before any node
 * call), then the node's hint (over the bound: dropped). The EVM runs elsewhere (`evm.runner`: worker
 * threads with a wall-clock budget), on a snapshot of the proven state sent with each round, with
 * gas capped at the least of the call's, the block's gas limit and evm.gasCap. The proven state is
 * kept for the runs of one client call (eth_estimateGas runs twice); `gasRan` is what they used.
 * @example
 * const run = await ProvenRun.prepare(pool, kind, tx, header, opts, evm)
 * const outcome = await run.until({ type: 'call', tx: run.tx, gas: run.gas })
 */
export class ProvenRun {
  /** BLOCKHASH's answers: the hashes below the trusted header, linked to it by parent hashes. */
  readonly blockHashes: ProvenBlockHashes
  readonly header: RunHeader
  /** The call's fields as the EVM reads them. */
  readonly tx: RunTx
  /** The gas a run is given: the least of the call's (else the block's gas limit), the block's gas limit and evm.gasCap. */
  readonly gas: bigint
  /** Whether `gas` is below what the client or a node would give the call (a gateway's rule, not a node's). */
  readonly gasCapped: boolean
  /** Gas the runs of this call used (the round that answered each; a stopped run: all it was given), for its charge. */
  gasRan = 0n
  readonly #accounts = new Map<string, SnapshotAccount | null>()
  readonly #storage = new Map<string, Map<string, bigint>>()
  readonly #hashes = new Map<number, Hex>()
  readonly #want = new Map<string, Set<string>>()

  private constructor(
    private readonly pool: UpstreamPool,
    private readonly kind: NodeKind,
    readonly trusted: TrustedHeader,
    call: CallObject,
    private readonly opts: PoolCallOptions,
    private readonly evm: EvmLimits,
  ) {
    this.header = trusted.header as RunHeader
    this.blockHashes = new ProvenBlockHashes({ pool, timeoutMs: opts.timeoutMs, counts: { calls: 0 } }, trusted)
    const from = (call.from ?? `0x${'00'.repeat(20)}`).toLowerCase() as Hex
    this.tx = {
      from,
      to: call.to ? (call.to.toLowerCase() as Hex) : undefined,
      data: (call.data ?? call.input ?? '0x') as Hex,
      value: call.value === undefined ? 0n : BigInt(call.value),
      accessList: call.accessList ?? [],
    }
    const blockGas = BigInt(this.header.gasLimit)
    const asked = call.gas === undefined ? blockGas : BigInt(call.gas)
    let gas = asked < blockGas ? asked : blockGas
    const cap = evm.gasCap()
    if (cap < gas) gas = cap
    this.gas = gas
    // A node given no gas may run the call with more than the block's gas limit (geth: its own gas cap).
    this.gasCapped = call.gas === undefined || gas < asked
    this.#want.set(from, new Set())
    this.#want.set(this.header.miner.toLowerCase(), new Set())
    if (this.tx.to !== undefined) this.#want.set(this.tx.to, new Set())
  }

  /**
   * A run of `tx` at `trusted`, with the client's access list and a node's as the first guess of
   * what it reads; refused (RunRefused) when the client's alone is over the bound, before any
   * node is asked.
   */
  static async prepare(pool: UpstreamPool, kind: NodeKind, tx: CallObject, trusted: TrustedHeader, opts: PoolCallOptions, evm: EvmLimits): Promise<ProvenRun> {
    const run = new ProvenRun(pool, kind, trusted, tx, opts, evm)
    const list: unknown[] = Array.isArray(tx.accessList) ? tx.accessList : []
    // Counted before the first proof: 2,000 addresses would be 2,000 eth_getProof calls at once.
    // A malformed entry counts too, and is not proven (the node refuses the call's params).
    let named = 0
    for (const e of list) {
      const { address, storageKeys } = (e ?? {}) as { address?: unknown; storageKeys?: unknown }
      const keys = Array.isArray(storageKeys) ? storageKeys : []
      named += 1 + keys.length
      if (typeof address === 'string' && /^0x[0-9a-fA-F]{40}$/.test(address))
        run.#wantAll(
          address,
          keys.filter((k): k is string => typeof k === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(k)),
        )
    }
    const wanted = Math.max(run.#wanted(), named)
    if (wanted > MAX_PROVEN) {
      throw new RunRefused('state', REFUSED_BECAUSE.RUN_READS_TOO_MUCH.ACCESS_LIST({ wanted, max: MAX_PROVEN }))
    }
    const hint = await pool
      .call({ ...opts, kind, method: 'eth_createAccessList', params: [tx, { blockHash: trusted.hash }], idJson: '0', checked: true })
      .catch(() => undefined)
    // A node without it makes every run find what it reads round by round (more proofs): for /metrics.
    if (hint?.isError === true) nodesLackOf(pool).saw(hint.node, 'eth_createAccessList')
    if (hint !== undefined && !hint.isError) {
      const entries = (JSON.parse(hint.text) as { result?: { accessList?: { address: string; storageKeys: string[] }[] } }).result?.accessList
      // Only a guess: one over the bound is dropped whole (a node's list of 2,000 would be as many
      // proofs, and a cut one would fill the bound with what the run may not read); the run then
      // finds what it reads round by round, the bound checked each time.
      const guess = new Map<string, string[]>()
      let more = 0
      for (const e of Array.isArray(entries) ? entries : []) {
        const a = typeof e?.address === 'string' ? e.address.toLowerCase() : ''
        const keys = Array.isArray(e?.storageKeys) ? e.storageKeys.filter((k) => typeof k === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(k)) : []
        if (!/^0x[0-9a-f]{40}$/.test(a)) continue
        if (!run.#want.has(a) && !guess.has(a)) more++
        more += keys.length
        guess.set(a, [...(guess.get(a) ?? []), ...keys])
        if (wanted + more > MAX_PROVEN) break
      }
      if (wanted + more <= MAX_PROVEN) for (const [a, keys] of guess) run.#wantAll(a, keys)
    }
    return run
  }

  /** `job` on proven state, proving what it read beyond it and running it again, until it read nothing unproven. */
  async until(job: RunJob): Promise<RunOutcome> {
    for (let round = 0; ; round++) {
      await this.#prove()
      let out: RunOutcome
      try {
        out = await this.evm.runner.run({ snapshot: this.#snapshot(), job })
      } catch (err) {
        if (err instanceof EvmRunTimeout) this.gasRan += job.gas
        throw err
      }
      // Charged: the gas of the round that answers, what the call used as a node would run it. The
      // rounds before it (at most MAX_ROUNDS) are the gateway's own cost of finding what to prove.
      if (out.missing.size === 0 && out.missingHashes.length === 0) {
        this.gasRan += out.gasUsed
        return out
      }
      if (round + 1 >= MAX_ROUNDS) throw new RunRefused('state', REFUSED_BECAUSE.RUN_READS_TOO_MUCH.ROUNDS({ rounds: MAX_ROUNDS }))
      for (const [address, slots] of out.missing) this.#wantAll(address, slots, false)
      const wanted = this.#wanted()
      if (wanted > MAX_PROVEN) throw new RunRefused('state', REFUSED_BECAUSE.RUN_READS_TOO_MUCH.READS({ wanted, max: MAX_PROVEN }))
      await this.#link(out.missingHashes)
    }
  }

  /** The block a run is in: the trusted header's fields. */
  #block(): RunBlock {
    const h = this.header
    return {
      number: BigInt(this.trusted.number),
      coinbase: h.miner.toLowerCase() as Hex,
      timestamp: BigInt(h.timestamp),
      difficulty: BigInt(h.difficulty ?? '0x0'),
      prevRandao: (h.mixHash ?? `0x${'00'.repeat(32)}`) as Hex,
      gasLimit: BigInt(h.gasLimit),
      baseFeePerGas: h.baseFeePerGas === undefined ? undefined : BigInt(h.baseFeePerGas),
    }
  }

  #snapshot(): ProvenSnapshot {
    return { chainId: this.pool.chainId, accounts: this.#accounts, storage: this.#storage, hashes: this.#hashes, block: this.#block() }
  }

  #wanted(): number {
    let n = 0
    for (const slots of this.#want.values()) n += 1 + slots.size
    return n
  }

  #wantAll(address: string, storageKeys: readonly string[], asKeys = true): void {
    const a = address.toLowerCase()
    const slots = this.#want.get(a) ?? new Set()
    for (const k of storageKeys) slots.add(asKeys ? slotKey(k as Hex) : k)
    this.#want.set(a, slots)
  }

  /** The hashes BLOCKHASH read that were not linked yet: linked down from the trusted header. */
  async #link(numbers: readonly number[]): Promise<void> {
    for (const n of [...numbers].sort((a, b) => a - b)) {
      if (this.#hashes.has(n)) continue
      this.#hashes.set(n, bytesToHex((await this.blockHashes.getBlock(n)).hash()) as Hex)
    }
  }

  /** Prove each wanted account and slot not proven yet into the state, code included. */
  async #prove(): Promise<void> {
    const { kind, opts, trusted } = this
    await Promise.all(
      [...this.#want].map(async ([address, wanted]) => {
        const known = this.#storage.get(address)
        const slots = [...wanted].filter((s) => !known?.has(s))
        if (this.#accounts.has(address) && slots.length === 0) return
        const params = [address, slots, { blockHash: trusted.hash }]
        const proven = async (reply: Answer) => {
          const proof = (JSON.parse(reply.text) as { result?: RpcAccountProof }).result
          if (proof === undefined || proof === null) throw checkFailure('NO_PROOF', { address })
          return verifyStateProof(proof, trusted.stateRoot, { address: address as Hex, storageKeys: slots as Hex[] })
        }
        const call = { kind, method: 'eth_getProof', params, minBlock: trusted.number, opts, errorsChecked: true }
        const account = await firstPassing(this.pool, call, async (reply) => {
          if (!reply.isError) return proven(reply)
          // A node that refuses the block by hash is asked by number; one that cannot prove either
          // way (pruned state) is passed over, and every node's error is the call's answer.
          const numbered = await askedByNumber(this.pool, kind, 'eth_getProof', [address, slots], trusted, reply.node, opts)
          if (numbered.isError) throw new PassOver(PASSED_OVER_BECAUSE.NODE_ERRED({ method: 'eth_getProof' }), numbered)
          return ofTrustedBlock(this.pool, kind, trusted, numbered.node, opts, () => proven(numbered))
        })
        await this.#put(account, slots)
      }),
    )
  }

  async #put(account: ProvenAccount, slots: string[]): Promise<void> {
    const { kind, opts, trusted } = this
    if (!this.#accounts.has(account.address)) {
      let code: Hex = '0x'
      if (account.exists && account.codeHash !== EMPTY_CODE_HASH) {
        const params = [account.address, { blockHash: trusted.hash }]
        const checked = async (reply: Answer) => codeAnswer((JSON.parse(reply.text) as { result: Hex }).result, account)
        const call = { kind, method: 'eth_getCode', params, minBlock: trusted.number, opts, notJson: 'CODE_HASH' as const, errorsChecked: true }
        code = await firstPassing(this.pool, call, async (reply) => {
          if (!reply.isError) return checked(reply)
          const numbered = await askedByNumber(this.pool, kind, 'eth_getCode', [account.address], trusted, reply.node, opts)
          if (numbered.isError) throw new PassOver(PASSED_OVER_BECAUSE.NODE_ERRED({ method: 'eth_getCode' }), numbered)
          return ofTrustedBlock(this.pool, kind, trusted, numbered.node, opts, () => checked(numbered))
        })
      }
      const { nonce, balance, storageHash, codeHash } = account
      this.#accounts.set(account.address, account.exists ? { nonce, balance, storageHash, codeHash, code } : null)
    }
    let known = this.#storage.get(account.address)
    if (known === undefined) this.#storage.set(account.address, (known = new Map()))
    for (const slot of slots) known.set(slot, account.exists ? (account.storage.get(slotKey(slot as Hex)) ?? 0n) : 0n)
  }
}
