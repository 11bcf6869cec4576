import type { NodeKind } from '../core/node-kind.js'
import type { Answer } from '../upstream/answer.js'
import type { PoolCallOptions, UpstreamPool } from '../upstream/pool.js'
import { REFUSED_BECAUSE } from '../errors/messages.js'
import { checkFailure } from '../proofs/check-failure.js'
import type { Hex } from '../proofs/rpc-shapes.js'
import type { RunOutcome } from './evm-run.js'
import { askedByNumber, ofTrustedBlock } from './by-number.js'
import { firstPassing, harmlessOnly } from './first-passing.js'
import { type CallObject, callAt, type EvmLimits, ProvenRun } from './proven-run.js'
import { RunRefused } from './errors.js'
import { refusedRun, runAnswer, shielded } from './run-answer.js'
import type { TrustedHeader, TrustedHeaders } from './trusted-headers.js'

/**
 * eth_call verified (networks.<slug>.verify: calls; docs/verified-answers.md): the call is run by
 * the gateway, in an EVM (@ethereumjs/evm, in a worker thread: EvmWorkers), on state proven
 * against the trusted header (ProvenRun). A node is asked first: an error no run could turn into
 * a value (anything but a revert with data: funds too low, gas below the intrinsic cost, the node's
 * own limits) is handed on with no run made, as it tells the client nothing a liar could use.
 * A value or a revert is handed on only when the run agrees, compared by class: the same return
 * data, the same revert data, or, for a run that failed otherwise (an invalid opcode, out of gas),
 * any error of the node. A node is counted (a failed check) only where the run is the proof: a
 * value where the run ran out of gas with less gas than the node may have given it (evm.gasCap,
 * the block's gas limit) is the gateway's own bound, answered VERIFY_GAS_CAPPED with no node
 * counted. Not proven: a call's gas (the answer is its return data).
 */
export class VerifiedCalls {
  constructor(
    private readonly pool: UpstreamPool,
    readonly headers: TrustedHeaders,
    private readonly evm: EvmLimits,
  ) {}

  async call(kind: NodeKind, params: unknown, idJson: string, opts: PoolCallOptions): Promise<Answer> {
    const at = callAt(params)
    if (at === undefined) return this.#errorOnly(kind, params, idJson, opts)
    const { tx, ref } = at
    const header = await this.headers.at(ref)
    if (header === null) return this.#errorOnly(kind, params, idJson, opts)
    let run: ProvenRun | undefined
    try {
      // Before any node call: a client's access list over the bound is refused here.
      run = await ProvenRun.prepare(this.pool, kind, tx, header, opts, this.evm)
      const { answer, checked } = await this.#checked(kind, tx, header, opts, run)
      const out = runAnswer(answer.withId(idJson), run)
      // A node's error handed on with no run is not what the run found: not marked verified.
      if (checked) out.verifiedAt = header.hash
      return out
    } catch (err) {
      return refusedRun(err, idJson, kind, run)
    }
  }

  /**
   * The first node answer the run agrees with (the run made once, when a node's answer needs it),
   * and whether it was checked against the run (a node's error no run could contradict is not).
   */
  async #checked(kind: NodeKind, tx: CallObject, header: TrustedHeader, opts: PoolCallOptions, run: ProvenRun): Promise<{ answer: Answer; checked: boolean }> {
    let ran: Promise<RunOutcome> | undefined
    const call = { kind, method: 'eth_call', params: [tx, { blockHash: header.hash }], minBlock: header.number, opts, notJson: 'CALL_RESULT' as const }
    let checked = false
    const judged = async (reply: Answer): Promise<Answer> => {
      const body = JSON.parse(reply.text) as { result?: unknown; error?: { code?: unknown; data?: unknown } }
      checked = !reply.isError || isRevertWithData(body.error)
      if (!checked) return reply
      const outcome = await (ran ??= shielded(run.until({ type: 'call', tx: run.tx, gas: run.gas })))
      switch (outcome.end) {
        case 'returned':
          if (!reply.isError && sameHex(body.result, outcome.returned)) return reply
          break
        case 'reverted':
          if (reply.isError && sameHex(body.error?.data, outcome.returned)) return reply
          break
        case 'failed':
          // Not REVERT: the node's words for it are its own (anvil, geth and reth each word an
          // invalid opcode or running out of gas differently), so any error of the node agrees.
          if (reply.isError) return reply
          if (run.gasCapped && /gas/i.test(outcome.error ?? '')) throw new RunRefused('gas', REFUSED_BECAUSE.RUN_GAS_CAPPED.OUT_OF_GAS({ gas: run.gas }))
          break
      }
      throw checkFailure('CALL_RESULT_DIFFERS', { ran: outcome, answered: reply.isError ? { error: body.error?.data } : { result: body.result } })
    }
    const answer = await firstPassing(this.pool, call, async (reply) => {
      if (!reply.isError || isRevertWithData((JSON.parse(reply.text) as { error?: { data?: unknown } }).error)) return judged(reply)
      // An error no run could contradict may be the node's refusal of a block named by hash
      // (Ganache 7.9.2: -32700 "Cannot wrap a "object" as a json-rpc type"): the same node is asked
      // by number, and what it answers there is judged as any answer, against its own block.
      const numbered = await askedByNumber(this.pool, kind, 'eth_call', [tx], header, reply.node, opts)
      return ofTrustedBlock(this.pool, kind, header, numbered.node, opts, () => judged(numbered))
    })
    return { answer, checked }
  }

  /** A call at a block this gateway cannot check: only a node's error goes on. */
  #errorOnly(kind: NodeKind, params: unknown, idJson: string, opts: PoolCallOptions): Promise<Answer> {
    const refused = () => checkFailure('CALL_NOT_CHECKABLE', {})
    return harmlessOnly(this.pool, { kind, method: 'eth_call', params, idJson, opts }, () => false, refused)
  }
}

/**
 * A node's error that a run could contradict: a revert, with its data (geth, reth and anvil answer
 * code 3 with the revert's data as hex). Any other error (funds, intrinsic gas, the node's own
 * limits) no run turns into a value.
 */
function isRevertWithData(error: { code?: unknown; data?: unknown } | undefined): boolean {
  return typeof error?.data === 'string' && /^0x(?:[0-9a-fA-F]{2})*$/.test(error.data)
}

function sameHex(a: unknown, b: Hex): boolean {
  return typeof a === 'string' && a.toLowerCase() === b.toLowerCase()
}
