import { createEVM } from '@ethereumjs/evm'
import { createAddressFromString } from '@ethereumjs/util'
import { bytesToHex, hexToBytes } from 'viem'
import type { NodeKind } from '../core/node-kind.js'
import type { Answer } from '../upstream/answer.js'
import type { PoolCallOptions, UpstreamPool } from '../upstream/pool.js'
import { VerificationError } from '../verify/errors.js'
import type { Hex } from '../verify/rpc-shapes.js'
import { firstPassing, harmlessOnly } from './first-passing.js'
import { type CallObject, callAt, ProvenRun } from './proven-run.js'
import type { TrustedHeader, TrustedHeaders } from './trusted-headers.js'

/**
 * eth_call verified (networks.<slug>.verify: calls; docs/verified-answers.md): the call is run by
 * the gateway, in an EVM (@ethereumjs/evm), on state proven against the trusted header: every
 * account and slot the run reads is proven with eth_getProof (a node's eth_createAccessList is only
 * a first guess; what the run reads beyond it is proven and the run repeated), code against its
 * proven code hash. A node's eth_call answer is handed on only when it is what the run returned (or
 * the same revert). As Helios and the Lodestar prover do, for a multi-tenant gateway.
 * BLOCKHASH reads hashes linked to the trusted header by parent hashes (ProvenBlockHashes). Not
 * proven: a call's gas (the answer is its return data).
 */
export class VerifiedCalls {
  constructor(
    private readonly pool: UpstreamPool,
    readonly headers: TrustedHeaders,
  ) {}

  async call(kind: NodeKind, params: unknown, idJson: string, opts: PoolCallOptions): Promise<Answer> {
    const at = callAt(params)
    if (at === undefined) return this.#errorOnly(kind, params, idJson, opts)
    const { tx, ref } = at
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

  /** The call run on proven state (ProvenRun): its return data, and whether it reverted. */
  async #run(kind: NodeKind, tx: CallObject, header: TrustedHeader, opts: PoolCallOptions): Promise<{ reverted: boolean; returned: Hex }> {
    const run = await ProvenRun.prepare(this.pool, kind, tx, header, opts, 'CALL_RESULT', 'eth_call')
    return run.until(async (state) => {
      const evm = await createEVM({ common: run.common, stateManager: state, blockchain: run.blockHashes })
      const result = await evm.runCall({
        caller: createAddressFromString(run.from),
        origin: createAddressFromString(run.from),
        to: tx.to ? createAddressFromString(tx.to) : undefined,
        data: hexToBytes((tx.data ?? tx.input ?? '0x') as Hex),
        value: tx.value === undefined ? 0n : BigInt(tx.value),
        gasLimit: tx.gas === undefined ? BigInt(run.header.gasLimit) : BigInt(tx.gas),
        skipBalance: true,
        block: { header: { ...run.blockFields(), getBlobGasPrice: () => 1n } },
      })
      return { reverted: result.execResult.exceptionError !== undefined, returned: bytesToHex(result.execResult.returnValue) as Hex }
    })
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
