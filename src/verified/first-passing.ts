import type { NodeKind } from '../core/node-kind.js'
import type { Answer } from '../upstream/answer.js'
import type { PoolCallOptions, UpstreamPool } from '../upstream/pool.js'
import { type VerifyCheck, VerificationError } from '../verify/errors.js'

/**
 * No node's answer passed the check: the client gets ANSWER_UNVERIFIED naming the last check that
 * failed (never an unchecked answer).
 */
export class AnswerUnverified extends Error {
  override name = 'AnswerUnverified'
  /** In words, without node names: `3 node answers failed ACCOUNT_PROOF (0xab… balance)`. */
  readonly what: string
  constructor(what: string, options?: { cause?: unknown }) {
    super(what, options)
    this.what = what
  }
}

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
}

/**
 * Ask nodes (`first`, then the pool's choice, failover included) until one's answer passes `check`:
 * each that fails is reported to the pool (counted, a dispute) and not asked again. When no node is
 * left: AnswerUnverified naming the last check that failed (or the pool's own failure, when no
 * answer failed a check).
 * @example const proof = await firstPassing(pool, { kind, method: 'eth_getProof', params, minBlock, opts }, verify)
 */
export async function firstPassing<T>(pool: UpstreamPool, call: CheckedCall, check: (answer: Answer) => Promise<T>): Promise<T> {
  const avoid = new Set(call.opts.avoid)
  let failed: VerificationError | undefined
  let failures = 0
  let attempts = 0
  for (let node = call.first; ; node = undefined) {
    let answer: Answer
    try {
      answer = await pool.call(call.kind, call.method, call.params, '0', { ...call.opts, avoid, node, minBlock: call.minBlock, checked: true })
    } catch (err) {
      if (failed !== undefined) throw unverified(failures, failed)
      throw err
    }
    attempts += answer.attempts
    answer.attempts = attempts
    try {
      return await check(answer)
    } catch (err) {
      if (!(err instanceof VerificationError) && !(err instanceof SyntaxError)) throw err
      failed = err instanceof VerificationError ? err : new VerificationError(call.notJson ?? 'ACCOUNT_PROOF', call.method, 'JSON', 'not JSON')
      failures++
      const by = pool.nodes().find((n) => n.name === answer.node)
      if (by === undefined) throw unverified(failures, failed)
      pool.failedCheck(by, failed.code)
      avoid.add(by.name)
    }
  }
}

function unverified(failures: number, last: VerificationError): AnswerUnverified {
  return new AnswerUnverified(`${failures} node answer${failures === 1 ? '' : 's'} failed ${last.code} (${last.subject})`, { cause: last })
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
  const answer = await pool.call(call.kind, call.method, call.params, call.idJson, { ...call.opts, checked: true })
  if (answer.isError || harmless(answer)) return answer
  throw refused()
}
