import type { NodeKind } from '../core/node-kind.js'
import type { Answer } from '../upstream/answer.js'
import type { PoolCallOptions, UpstreamPool } from '../upstream/pool.js'
import { REFUSED_BECAUSE } from '../errors/messages.js'
import { checkFailure } from '../proofs/check-failure.js'
import { askedByNumber, ofTrustedBlock } from './by-number.js'
import { firstPassing, harmlessOnly } from './first-passing.js'
import { callAt, type EvmLimits, ProvenRun } from './proven-run.js'
import { RunRefused } from './errors.js'
import { refusedRun, runAnswer, shielded } from './run-answer.js'
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
    private readonly evm: EvmLimits,
  ) {}

  async call(kind: NodeKind, params: unknown, idJson: string, opts: PoolCallOptions): Promise<Answer> {
    const at = callAt(params)
    const checkable = at !== undefined && UNMODELLED.every((f) => at.tx[f] === undefined)
    const header = checkable ? await this.headers.at(at.ref) : null
    if (!checkable || header === null) return this.#errorOnly(kind, params, idJson, opts)
    const { tx } = at
    let run: ProvenRun | undefined
    try {
      run = await ProvenRun.prepare(this.pool, kind, tx, header, opts, this.evm)
      const answer = await this.#checked(kind, tx, header.hash, header.number, opts, run)
      const out = runAnswer(answer.withId(idJson), run)
      if (!answer.isError) out.verifiedAt = header.hash
      return out
    } catch (err) {
      return refusedRun(err, idJson, kind, run)
    }
  }

  async #checked(kind: NodeKind, tx: object, hash: string, number: number, opts: PoolCallOptions, run: ProvenRun): Promise<Answer> {
    const blockGas = BigInt(run.header.gasLimit)
    // What a node may estimate up to: the call's gas, else the block's gas limit.
    const nodeCap = 'gas' in tx && typeof tx.gas === 'string' ? BigInt(tx.gas) : blockGas
    const call = { kind, method: 'eth_estimateGas', params: [tx, { blockHash: hash }], minBlock: number, opts, notJson: 'GAS_ESTIMATE' as const }
    const fits = async (gas: bigint) => (await shielded(run.until({ type: 'fits', tx: run.tx, gas }))).end === 'returned'
    const judged = async (reply: Answer): Promise<Answer> => {
      // A node's error (a revert, funds too low) misleads no transaction into a block: no run.
      if (reply.isError) return reply
      const result = (JSON.parse(reply.text) as { result?: unknown }).result
      if (typeof result !== 'string' || !/^0x[0-9a-f]{1,16}$/i.test(result)) throw checkFailure('ESTIMATE_NOT_A_QUANTITY', { result })
      const estimate = BigInt(result)
      if (estimate > nodeCap) throw checkFailure('ESTIMATE_ABOVE_CAP', { cap: nodeCap, estimate: result })
      // Within what the node may give, above what the gateway runs: its own bound, no node counted.
      if (estimate > run.gas) throw new RunRefused('gas', REFUSED_BECAUSE.RUN_GAS_CAPPED.ESTIMATE_ABOVE_RUN({ estimate, gas: run.gas }))
      if (!(await fits(estimate))) {
        throw checkFailure('ESTIMATE_TOO_LOW', { estimate })
      }
      const less = estimate - estimate / SLACK_DIVISOR - 1n
      if (await fits(less)) {
        throw checkFailure('ESTIMATE_TOO_HIGH', { estimate, works: less })
      }
      return reply
    }
    return firstPassing(this.pool, call, async (reply) => {
      if (!reply.isError) return judged(reply)
      // The error may be the node's refusal of a block named by hash (Ganache 7.9.2: -32700
      // "Cannot wrap a "object" as a json-rpc type"): the same node is asked by number, and an
      // estimate it gives there is judged as any, against its own block.
      const numbered = await askedByNumber(this.pool, kind, 'eth_estimateGas', [tx], run.trusted, reply.node, opts)
      return ofTrustedBlock(this.pool, kind, run.trusted, numbered.node, opts, () => judged(numbered))
    })
  }

  /** An estimate at a block this gateway cannot check, or of a transaction it does not model: only a node's error goes on. */
  #errorOnly(kind: NodeKind, params: unknown, idJson: string, opts: PoolCallOptions): Promise<Answer> {
    const refused = () => checkFailure('ESTIMATE_NOT_CHECKABLE', {})
    return harmlessOnly(this.pool, { kind, method: 'eth_estimateGas', params, idJson, opts }, () => false, refused)
  }
}
