import { createBlock } from '@ethereumjs/block'
import { createCustomCommon, Hardfork, Mainnet } from '@ethereumjs/common'
import { createEVM, type EVMMockBlockchainInterface } from '@ethereumjs/evm'
import { SimpleStateManager } from '@ethereumjs/statemanager'
import { createTx } from '@ethereumjs/tx'
import { Account, type Address, createAddressFromString } from '@ethereumjs/util'
import { createVM, runTx } from '@ethereumjs/vm'
import { bytesToHex, hexToBytes, numberToHex } from 'viem'
import type { Hex } from '../proofs/rpc-shapes.js'

/**
 * One run of the gateway's EVM on proven state, as plain data: what a worker thread is sent
 * (structured clone: Maps and bigints go as they are) and what it answers. Nothing here asks a
 * node: what the run reads that the state does not hold is reported, proven by the caller, and
 * the run repeated (ProvenRun).
 */

/** A proven account: null when the proof shows none at the address. */
export interface SnapshotAccount {
  nonce: bigint
  balance: bigint
  storageHash: Hex
  codeHash: Hex
  /** Its code, proven against codeHash ('0x' for none). */
  code: Hex
}

/** The block a run is in: the trusted header's fields. */
export interface RunBlock {
  number: bigint
  coinbase: Hex
  timestamp: bigint
  difficulty: bigint
  prevRandao: Hex
  gasLimit: bigint
  baseFeePerGas: bigint | undefined
}

/** The proven state of one round: accounts, their proven slots (32-byte hex, absent: 0), the hashes BLOCKHASH may read. */
export interface ProvenSnapshot {
  chainId: number
  accounts: Map<string, SnapshotAccount | null>
  storage: Map<string, Map<string, bigint>>
  hashes: Map<number, Hex>
  block: RunBlock
}

/** The call's fields a run reads. */
export interface RunTx {
  from: Hex
  to: Hex | undefined
  data: Hex
  value: bigint
  accessList: { address: Hex; storageKeys: Hex[] }[]
}

/**
 * `call`: eth_call's run, given `gas` in all (the intrinsic gas is taken first, as a node does);
 * `fits`: whether the transaction runs to its end with `gas` (eth_estimateGas's check, runTx with
 * intrinsic gas, refunds and the calldata floor).
 */
export type RunJob = { type: 'call' | 'fits'; tx: RunTx; gas: bigint }

export interface RunRequest {
  snapshot: ProvenSnapshot
  job: RunJob
}

/**
 * How a run ended: `returned` (its return data), `reverted` (REVERT, with its data), `failed`
 * (any other end: an invalid opcode, out of gas, funds below the value, gas below the intrinsic
 * cost: a node answers these with an error whose words are its own).
 */
export interface RunOutcome {
  end: 'returned' | 'reverted' | 'failed'
  returned: Hex
  /** The EVM's words for a failed run. */
  error?: string
  /** Gas the run used (all it was given when it failed). */
  gasUsed: bigint
  /** Accounts (with slots) the run read that the snapshot did not hold. */
  missing: Map<string, string[]>
  /** Blocks whose hash BLOCKHASH read that the snapshot did not hold. */
  missingHashes: number[]
}

/** The blocks below its own that BLOCKHASH can read (the EVM answers 0 for any other). */
const BLOCKHASH_WINDOW = 256
const ZERO_HASH = new Uint8Array(32)

/** The state of a snapshot, noting what a run asks of it that it does not hold. */
class SnapshotState extends SimpleStateManager {
  readonly missing = new Map<string, Set<string>>()

  constructor(
    private readonly snapshot: ProvenSnapshot,
    opts: ConstructorParameters<typeof SimpleStateManager>[0],
  ) {
    super(opts)
  }

  override async getAccount(address: Address): Promise<Account | undefined> {
    const a = address.toString().toLowerCase()
    if (!this.snapshot.accounts.has(a) && !isPrecompile(a)) this.#miss(a)
    return super.getAccount(address)
  }

  override async getStorage(address: Address, key: Uint8Array): Promise<Uint8Array> {
    const a = address.toString().toLowerCase()
    const slot = bytesToHex(key)
    if (!this.snapshot.storage.get(a)?.has(slot)) this.#miss(a, slot)
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

/** BLOCKHASH from the snapshot's hashes; one it lacks is noted (the round is repeated with it linked). */
class SnapshotHashes implements EVMMockBlockchainInterface {
  readonly missing: number[] = []
  constructor(private readonly snapshot: ProvenSnapshot) {}

  async getBlock(number: number): Promise<{ hash(): Uint8Array }> {
    const below = Number(this.snapshot.block.number) - number
    if (below < 1 || below > BLOCKHASH_WINDOW) return { hash: () => ZERO_HASH }
    const hash = this.snapshot.hashes.get(number)
    if (hash === undefined) {
      this.missing.push(number)
      return { hash: () => ZERO_HASH }
    }
    const bytes = hexToBytes(hash)
    return { hash: () => bytes }
  }

  async putBlock(): Promise<void> {}

  shallowCopy(): this {
    return this
  }
}

/**
 * The gas a node takes before a call runs (the EIP-7623 floor included: a gas limit below either
 * is refused by the node): 21,000, 4 per zero byte and 16 per other of calldata, a creation's
 * 32,000 and 2 per word of its code, 2,400 per access-list address and 1,900 per key.
 */
export function intrinsicGas(tx: RunTx): bigint {
  const data = hexToBytes(tx.data)
  let zeros = 0n
  for (const b of data) if (b === 0) zeros++
  const others = BigInt(data.length) - zeros
  const tokens = zeros + others * 4n
  let gas = 21_000n + tokens * 4n
  if (tx.to === undefined) gas += 32_000n + 2n * ((BigInt(data.length) + 31n) / 32n)
  for (const e of tx.accessList) gas += 2_400n + 1_900n * BigInt(e.storageKeys.length)
  const floor = 21_000n + tokens * 10n
  return gas > floor ? gas : floor
}

/** Run `job` on `snapshot` (in a worker thread: evm-worker.ts; inline in a bench). */
export async function runOnSnapshot({ snapshot, job }: RunRequest): Promise<RunOutcome> {
  const common = createCustomCommon({ chainId: snapshot.chainId }, Mainnet, { hardfork: Hardfork.Prague })
  const state = new SnapshotState(snapshot, { common })
  for (const [address, account] of snapshot.accounts) {
    if (account === null) continue
    const at = createAddressFromString(address)
    await state.putAccount(at, new Account(account.nonce, account.balance, hexToBytes(account.storageHash), hexToBytes(account.codeHash)))
    if (account.code !== '0x') await state.putCode(at, hexToBytes(account.code))
    for (const [slot, value] of snapshot.storage.get(address) ?? []) {
      if (value !== 0n) await state.putStorage(at, hexToBytes(slot as Hex), hexToBytes(numberToHex(value)))
    }
  }
  const hashes = new SnapshotHashes(snapshot)
  const out = await execute(snapshot, job, state, hashes)
  const missing = new Map<string, string[]>()
  for (const [a, slots] of state.missing) missing.set(a, [...slots])
  return { ...out, missing, missingHashes: hashes.missing }
}

async function execute(
  snapshot: ProvenSnapshot,
  job: RunJob,
  state: SnapshotState,
  hashes: SnapshotHashes,
): Promise<Omit<RunOutcome, 'missing' | 'missingHashes'>> {
  const { tx, gas } = job
  const from = createAddressFromString(tx.from)
  // A node refuses these before running anything; so does the run (the balance is proven).
  const intrinsic = intrinsicGas(tx)
  if (gas < intrinsic) return { end: 'failed', returned: '0x', error: `intrinsic gas too low: ${gas} < ${intrinsic}`, gasUsed: 0n }
  const balance = (await state.getAccount(from))?.balance ?? 0n
  if (tx.value > balance) return { end: 'failed', returned: '0x', error: `insufficient funds: ${balance} < ${tx.value}`, gasUsed: 0n }
  const b = snapshot.block
  const block = {
    number: b.number,
    coinbase: createAddressFromString(b.coinbase),
    timestamp: b.timestamp,
    difficulty: b.difficulty,
    prevRandao: hexToBytes(b.prevRandao),
    gasLimit: b.gasLimit,
    baseFeePerGas: b.baseFeePerGas,
  }
  if (job.type === 'call') {
    const evm = await createEVM({ common: state.common, stateManager: state, blockchain: hashes })
    const result = await evm.runCall({
      caller: from,
      origin: from,
      to: tx.to === undefined ? undefined : createAddressFromString(tx.to),
      data: hexToBytes(tx.data),
      value: tx.value,
      gasLimit: gas - intrinsic,
      // The value is checked against the proven balance above; the gas is not paid for (a call's gas price is 0).
      skipBalance: true,
      block: { header: { ...block, getBlobGasPrice: () => 1n } },
    })
    const e = result.execResult.exceptionError
    const returned = bytesToHex(result.execResult.returnValue) as Hex
    const gasUsed = intrinsic + result.execResult.executionGasUsed
    if (e === undefined) return { end: 'returned', returned, gasUsed }
    return e.error === 'revert' ? { end: 'reverted', returned, gasUsed } : { end: 'failed', returned: '0x', error: e.error, gasUsed: gas }
  }
  try {
    const vm = await createVM({ common: state.common, stateManager: state, blockchain: hashes })
    const header = createBlock({ header: block }, { common: state.common, skipConsensusFormatValidation: true })
    const unsigned = createTx(
      {
        type: 2,
        nonce: (await state.getAccount(from))?.nonce ?? 0n,
        to: tx.to,
        data: hexToBytes(tx.data),
        value: tx.value,
        gasLimit: gas,
        maxFeePerGas: b.baseFeePerGas ?? 0n,
        maxPriorityFeePerGas: 0n,
        accessList: tx.accessList,
      },
      { common: state.common, freeze: false },
    )
    // The sender is the call object's `from`: nothing is signed (as the Lodestar prover runs it).
    unsigned.getSenderAddress = () => from
    const result = await runTx(vm, {
      tx: unsigned,
      block: header,
      skipNonce: true,
      skipBalance: true,
      skipBlockGasLimitValidation: true,
      skipHardForkValidation: true,
    })
    const e = result.execResult.exceptionError
    const returned = bytesToHex(result.execResult.returnValue) as Hex
    if (e === undefined) return { end: 'returned', returned, gasUsed: result.totalGasSpent }
    return { end: e.error === 'revert' ? 'reverted' : 'failed', returned, error: e.error, gasUsed: gas }
  } catch (err) {
    // runTx refuses a gas limit below the intrinsic gas or the calldata floor: that gas does not work.
    if (err instanceof Error && /gas/i.test(err.message)) return { end: 'failed', returned: '0x', error: err.message, gasUsed: 0n }
    throw err
  }
}
