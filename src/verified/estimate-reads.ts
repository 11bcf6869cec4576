import { createBlock } from '@ethereumjs/block'
import { createTx } from '@ethereumjs/tx'
import { createAddressFromString } from '@ethereumjs/util'
import { createVM, runTx } from '@ethereumjs/vm'
import { hexToBytes } from 'viem'
import type { NodeKind } from '../core/node-kind.js'
import type { Answer } from '../upstream/answer.js'
import type { PoolCallOptions, UpstreamPool } from '../upstream/pool.js'
import { VerificationError } from '../verify/errors.js'
import type { Hex } from '../verify/rpc-shapes.js'
import { firstPassing, harmlessOnly } from './first-passing.js'
import { type CallObject, callAt, ProvenRun } from './proven-run.js'
import type { TrustedHeaders } from './trusted-headers.js'

/**
 * How far above the least gas that works an estimate may be: geth's search stops within 1.5% of it
 * (`estimateGasErrorRatio`), anvil's at it. 1/50: an estimate passes when the call fails with 2%
 * less gas.
 */
const SLACK_DIVISOR = 50n

/** Fields of a call object a run here does not model (blob and authorization lists): such estimates are not checked. */
const UNMODELLED = ['authorizationList', 'blobVersionedHashes', 'maxFeePerBlobGas', 'blobs'] as const

/**
 * eth_estimateGas verified (networks.<slug>.verify: calls; docs/verified-answers.md): a node's
 * estimate is handed on when the transaction, run by the gateway (@ethereumjs/vm's runTx, intrinsic
 * gas, refunds and the calldata floor included) on state proven against the trusted header,
 * succeeds with that much gas and fails with 2% less: an estimate too low (the client's transaction
 * would run out of gas) or inflated fails GAS_ESTIMATE and the call goes to another node. A node's
 * error (a revert, funds too low) is handed on as it is: it misleads no transaction into a block.
 * Two runs over one proven state; the proofs are those of a verified eth_call.
 */
export class VerifiedEstimates {
  constructor(
    private readonly pool: UpstreamPool,
    readonly headers: TrustedHeaders,
  ) {}

  async call(kind: NodeKind, params: unknown, idJson: string, opts: PoolCallOptions): Promise<Answer> {
    const at = callAt(params)
    const checkable = at !== undefined && UNMODELLED.every((f) => at.tx[f] === undefined)
    const header = checkable ? await this.headers.at(at.ref) : null
    if (!checkable || header === null) return this.#errorOnly(kind, params, idJson, opts)
    const { tx } = at
    const run = await ProvenRun.prepare(this.pool, kind, tx, header, opts, 'GAS_ESTIMATE', 'eth_estimateGas')
    const cap = tx.gas === undefined ? BigInt(run.header.gasLimit) : BigInt(tx.gas)
    const call = { kind, method: 'eth_estimateGas', params: [tx, { blockHash: header.hash }], minBlock: header.number, opts, notJson: 'GAS_ESTIMATE' as const }
    const answer = await firstPassing(this.pool, call, async (reply) => {
      if (reply.isError) return reply
      const result = (JSON.parse(reply.text) as { result?: unknown }).result
      if (typeof result !== 'string' || !/^0x[0-9a-f]{1,16}$/i.test(result))
        throw new VerificationError('GAS_ESTIMATE', 'eth_estimateGas', 'a quantity', String(result))
      const estimate = BigInt(result)
      if (estimate > cap) throw new VerificationError('GAS_ESTIMATE', 'eth_estimateGas', `at most the gas cap ${cap}`, result)
      if (!(await run.until((state) => succeeds(run, state, tx, estimate)))) {
        throw new VerificationError('GAS_ESTIMATE', 'eth_estimateGas', 'enough gas for the call (run on proven state)', `${estimate}, with which it fails`)
      }
      const less = estimate - estimate / SLACK_DIVISOR - 1n
      if (await run.until((state) => succeeds(run, state, tx, less))) {
        throw new VerificationError(
          'GAS_ESTIMATE',
          'eth_estimateGas',
          'at most 2% above the least gas that works (run on proven state)',
          `${estimate}, where ${less} works`,
        )
      }
      return reply
    })
    const out = answer.withId(idJson)
    if (!answer.isError) out.verifiedAt = header.hash
    return out
  }

  /** An estimate at a block this gateway cannot check, or of a transaction it does not model: only a node's error goes on. */
  #errorOnly(kind: NodeKind, params: unknown, idJson: string, opts: PoolCallOptions): Promise<Answer> {
    const refused = () =>
      new VerificationError(
        'GAS_ESTIMATE',
        'eth_estimateGas',
        'an estimate at a block the nodes agree on',
        'pending, a block no node agreed on, or blob or authorization lists',
      )
    return harmlessOnly(this.pool, { kind, method: 'eth_estimateGas', params, idJson, opts }, () => false, refused)
  }
}

/**
 * Whether `tx` with `gas` runs to its end (no revert, no running out of gas) on the proven state
 * (what it writes is undone by ProvenRun.until after each round).
 */
async function succeeds(run: ProvenRun, state: ProvenRun['state'], tx: CallObject, gas: bigint): Promise<boolean> {
  const from = createAddressFromString(run.from)
  try {
    const vm = await createVM({ common: run.common, stateManager: state, blockchain: run.blockHashes })
    const fields = run.blockFields()
    const block = createBlock({ header: fields }, { common: run.common, skipConsensusFormatValidation: true })
    const unsigned = createTx(
      {
        type: 2,
        nonce: (await state.getAccount(from))?.nonce ?? 0n,
        to: tx.to ?? undefined,
        data: hexToBytes((tx.data ?? tx.input ?? '0x') as Hex),
        value: tx.value === undefined ? 0n : BigInt(tx.value),
        gasLimit: gas,
        maxFeePerGas: fields.baseFeePerGas ?? 0n,
        maxPriorityFeePerGas: 0n,
        accessList: tx.accessList ?? [],
      },
      { common: run.common, freeze: false },
    )
    // The sender is the call object's `from`: nothing is signed (as the Lodestar prover runs it).
    unsigned.getSenderAddress = () => from
    const result = await runTx(vm, { tx: unsigned, block, skipNonce: true, skipBalance: true, skipBlockGasLimitValidation: true, skipHardForkValidation: true })
    return result.execResult.exceptionError === undefined
  } catch (err) {
    // runTx refuses a gas limit below the intrinsic gas or the calldata floor: that gas does not work.
    if (err instanceof Error && /gas/i.test(err.message)) return false
    throw err
  }
}
