import { errorResponseJson, GatewayError } from '../errors/registry.js'
import type { NodeKind } from '../core/node-kind.js'
import { Answer } from '../upstream/answer.js'
import { VerificationError } from '../verify/errors.js'
import { EvmRunTimeout } from './evm-workers.js'
import { AnswerUnverified } from './first-passing.js'
import { type ProvenRun, RunRefused, unitsOfGas } from './proven-run.js'

/** A verified call's answer, charged for the gas the gateway's EVM ran for it (Answer.extraUnits; docs/costs.md). */
export function runAnswer(answer: Answer, run: ProvenRun | undefined): Answer {
  if (run !== undefined) answer.extraUnits = unitsOfGas(run.gasRan)
  return answer
}

/**
 * The gateway's own refusal of a verified call (RunRefused: VERIFY_CALL_TOO_LARGE or
 * VERIFY_GAS_CAPPED; EvmRunTimeout: VERIFY_RUN_TIMEOUT) as the call's answer, charged for the gas
 * run so far (a stopped run: all it was given); any other failure is thrown on.
 */
export function refusedRun(err: unknown, idJson: string, kind: NodeKind, run: ProvenRun | undefined): Answer {
  let e: GatewayError
  if (err instanceof RunRefused) {
    e =
      err.why === 'gas'
        ? new GatewayError(
            'VERIFY_GAS_CAPPED',
            `This call needs more gas than this gateway's EVM runs a verified call with: ${err.what}; send less work in one call`,
            { cause: err },
          )
        : new GatewayError('VERIFY_CALL_TOO_LARGE', `This call reads more state than this gateway proves for one verified call: ${err.what}`, { cause: err })
  } else if (err instanceof EvmRunTimeout) {
    e = new GatewayError(
      'VERIFY_RUN_TIMEOUT',
      `This call ran longer than ${err.timeoutMs} ms in this gateway's EVM (evm.timeoutMs) and was stopped; send less work in one call, or less gas`,
      { cause: err },
    )
  } else throw err
  return runAnswer(Answer.gatewayError(errorResponseJson(idJson, e.rpc, e.message), e.http, kind), run)
}

/**
 * A run's own failures kept off the node whose answer it checks: a proof, a code or a block hash
 * no node could give (VerificationError from the run's own node calls, each counted there) is
 * ANSWER_UNVERIFIED for the client, not a failed check of the node that answered eth_call.
 */
export function shielded<T>(running: Promise<T>): Promise<T> {
  return running.catch((err: unknown) => {
    throw err instanceof VerificationError ? new AnswerUnverified(`the run on proven state: ${err.code} (${err.subject})`, { cause: err }) : err
  })
}
