import { refusal } from '../errors/messages.js'
import { UNVERIFIED_BECAUSE } from '../errors/problem-words.js'
import { errorResponseJson, type GatewayError } from '../errors/registry.js'
import type { NodeKind } from '../core/node-kind.js'
import { Answer } from '../upstream/answer.js'
import { VerificationError } from '../proofs/errors.js'
import { EvmRunTimeout } from './errors.js'
import { AnswerUnverified } from './errors.js'
import { type ProvenRun, unitsOfGas } from './proven-run.js'
import { RunRefused } from './errors.js'

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
    e = err.why === 'gas' ? refusal('RUN_GAS_CAPPED', { what: err.what }, { cause: err }) : refusal('RUN_READS_TOO_MUCH', { what: err.what }, { cause: err })
  } else if (err instanceof EvmRunTimeout) {
    e = refusal('RUN_TIMED_OUT', { timeoutMs: err.timeoutMs }, { cause: err })
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
    throw err instanceof VerificationError
      ? new AnswerUnverified(UNVERIFIED_BECAUSE.RUN_FAILED({ check: err.code, subject: err.subject }), { cause: err })
      : err
  })
}
