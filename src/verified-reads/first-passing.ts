import type { NodeKind } from '../core/node-kind.js'
import type { Answer } from '../upstream/answer.js'
import type { PoolCallOptions, UpstreamPool } from '../upstream/pool.js'
import { PASSED_OVER_BECAUSE, UNVERIFIED_BECAUSE } from '../errors/problem-words.js'
import { checkFailure } from '../proofs/check-failure.js'
import { type VerifyCheck, VerificationError } from '../proofs/errors.js'
import { AnswerUnverified, PassOver, NodeErrorAnswer } from './errors.js'

/**
 * The calls a check asks for what it checks against (proofs, blocks, receipts, code): a node's
 * error to one is the node's word that it cannot give it (no such method, state pruned, a block
 * form it does not read), never a failed check. The calls whose own answer is what is checked
 * (eth_call, eth_estimateGas, eth_getLogs) compare an error like any answer.
 */
const PROOF_MATERIAL: ReadonlySet<string> = new Set([
  'eth_getProof',
  'eth_getCode',
  'eth_getBlockByHash',
  'eth_getBlockByNumber',
  'eth_getBlockReceipts',
  'eth_getTransactionReceipt',
])

/** One node call to check, and where it may go. */
export interface CheckedCall {
  kind: NodeKind
  method: string
  params: unknown[]
  /** The block the answer must be of: nodes below it are passed over. */
  minBlock: number
  opts: PoolCallOptions
  /** Ask this node first (the one that gave the proof the answer is checked against). */
  first?: string
  /** The check an answer that is not JSON fails. */
  notJson?: VerifyCheck
  /**
   * `check` reads a node's error answer itself (asks again in another form, hands a pruned node's
   * error on): what it throws is then about what it asked since, and counts as for any answer.
   */
  errorsChecked?: boolean
}

/**
 * Ask nodes (`first`, then the pool's choice, failover included) until one's answer passes `check`:
 * each that fails is reported to the pool (counted, a dispute) and not asked again. An error answer
 * to a call for proof material (PROOF_MATERIAL) is no failed check: the node is passed over,
 * uncounted, as when `check` throws PassOver (unless `errorsChecked`). When no
 * node is left: AnswerUnverified naming the last check that failed; else the last node's error
 * (NodeErrorAnswer); else the pool's own failure.
 * @example const proof = await firstPassing(pool, { kind, method: 'eth_getProof', params, minBlock, opts }, verify)
 */
export async function firstPassing<T>(pool: UpstreamPool, call: CheckedCall, check: (answer: Answer) => Promise<T>): Promise<T> {
  const avoid = new Set(call.opts.avoid)
  let failed: VerificationError | undefined
  let failures = 0
  let attempts = 0
  let passed: PassOver | undefined
  for (let node = call.first; ; node = undefined) {
    let answer: Answer
    try {
      answer = await pool.call({
        ...call.opts,
        kind: call.kind,
        method: call.method,
        params: call.params,
        idJson: '0',
        avoid,
        node,
        minBlock: call.minBlock,
        checked: true,
      })
    } catch (err) {
      if (failed !== undefined) throw unverified(failures, failed)
      if (passed?.nodeError !== undefined) throw new NodeErrorAnswer(passed.nodeError)
      if (passed !== undefined) throw new AnswerUnverified(UNVERIFIED_BECAUSE.NO_ANSWER_OF_THE_BLOCK({ why: passed.why }), { cause: err })
      throw err
    }
    attempts += answer.attempts
    answer.attempts = attempts
    try {
      if (answer.isError && PROOF_MATERIAL.has(call.method) && call.errorsChecked !== true) {
        throw new PassOver(PASSED_OVER_BECAUSE.NODE_ERRED({ method: call.method }), answer)
      }
      return await check(answer)
    } catch (err) {
      if (err instanceof PassOver) {
        passed = err
        avoid.add(answer.node)
        continue
      }
      if (!(err instanceof VerificationError) && !(err instanceof SyntaxError)) throw err
      failed = err instanceof VerificationError ? err : checkFailure('NOT_JSON', { check: call.notJson ?? 'ACCOUNT_PROOF', method: call.method })
      failures++
      const by = pool.nodes().find((n) => n.name === answer.node)
      if (by === undefined) throw unverified(failures, failed)
      pool.failedCheck(by, failed.code)
      avoid.add(by.name)
    }
  }
}

function unverified(failures: number, last: VerificationError): AnswerUnverified {
  return new AnswerUnverified(UNVERIFIED_BECAUSE.ANSWERS_FAILED({ failures, check: last.code, subject: last.subject }), { cause: last })
}

/**
 * A read this gateway cannot check (`pending`, a block no node agreed on, a parameter it cannot
 * read): one node's answer goes on only when it is `harmless` (an error; no logs), which tells the
 * client nothing a liar could use. Any other answer is `refused` (the client gets
 * ANSWER_UNVERIFIED naming it), never handed on unchecked.
 */
export async function harmlessOnly(
  pool: UpstreamPool,
  call: { kind: NodeKind; method: string; params: unknown; idJson: string; opts: PoolCallOptions },
  harmless: (answer: Answer) => boolean,
  refused: () => Error,
): Promise<Answer> {
  const answer = await pool.call({ ...call.opts, kind: call.kind, method: call.method, params: call.params, idJson: call.idJson, checked: true })
  if (answer.isError || harmless(answer)) return answer
  throw refused()
}
