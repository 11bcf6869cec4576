import type { Answer } from '../upstream/answer.js'
import type { PoolCall, UpstreamPool } from '../upstream/pool.js'
import { VerificationError } from '../proofs/errors.js'
import { isVerifiedBlockRead, VerifiedBlockReads } from './block-reads.js'
import { NodesLack } from './errors.js'
import { AnswerUnverified, NodeErrorAnswer } from './errors.js'
import { VerifiedCalls } from './call-reads.js'
import { VerifiedEstimates } from './estimate-reads.js'
import { VerifiedLogReads } from './log-reads.js'
import { LogsRangeTooWide } from './errors.js'
import { isVerifiedStateRead, VerifiedStateReads } from './state-reads.js'
import { ProofTooWide } from './errors.js'
import type { EvmLimits } from './proven-run.js'
import { TrustedHeaders } from './trusted-headers.js'

/**
 * How a verified read ended, for /metrics: `verified` (answered after its check passed), `passed`
 * (handed on without a value to check: `pending`, a node's error, an absent block), `unverified`
 * (no node's answer passed: ANSWER_UNVERIFIED), `refused` (a range or a proof's slots wider than is proven, a method no node serves;
 * a call that needs more state, gas or time than a verified call is given),
 * `failed` (no node answered).
 */
export type VerifyOutcome = 'verified' | 'passed' | 'unverified' | 'refused' | 'failed'

/** Whether the network's `verify` setting checks this method (docs/verified-answers.md). */
export function isVerifiedRead(method: string, verify: 'off' | 'reads' | 'calls'): boolean {
  if (verify === 'off') return false
  if (method === 'eth_call' || method === 'eth_estimateGas') return verify === 'calls'
  return isVerifiedStateRead(method) || isVerifiedBlockRead(method) || method === 'eth_getLogs'
}

/**
 * A network's proven reads (networks.<slug>.verify: reads): state reads by proof, blocks and
 * receipts by their roots, logs proven complete, all over one set of trusted headers. Made at a
 * network's first verified read and kept with its pool (a reload keeps both).
 * @example
 * const out = await reads.call({ kind: 'full', method: 'eth_getBalance', params: [address, 'latest'], idJson: '1', timeoutMs: 5000 })
 */
export class VerifiedReads {
  readonly headers: TrustedHeaders
  readonly state: VerifiedStateReads
  readonly blocks: VerifiedBlockReads
  readonly logs: VerifiedLogReads
  readonly calls: VerifiedCalls
  readonly estimates: VerifiedEstimates
  /** Reads by method and outcome, for /metrics. */
  readonly outcomes = new Map<string, Map<VerifyOutcome, number>>()

  /** `evm`: where and with how much gas verified calls run (one pool of threads for every network). */
  constructor(pool: UpstreamPool, opts: { timeoutMs: number; evm: EvmLimits }) {
    this.headers = new TrustedHeaders(pool, opts)
    this.state = new VerifiedStateReads(pool, this.headers)
    this.blocks = new VerifiedBlockReads(pool, this.headers)
    this.logs = new VerifiedLogReads(pool, this.headers, this.blocks)
    this.calls = new VerifiedCalls(pool, this.headers, opts.evm)
    this.estimates = new VerifiedEstimates(pool, this.headers, opts.evm)
  }

  /** A verified read; the call is handed on as the options of the calls its check makes (its budget, its account). */
  async call(opts: PoolCall): Promise<Answer> {
    const { kind, method, params, idJson } = opts
    try {
      const out =
        method === 'eth_getLogs'
          ? await this.logs.call(kind, params, idJson, opts)
          : method === 'eth_call'
            ? await this.calls.call(kind, params, idJson, opts)
            : method === 'eth_estimateGas'
              ? await this.estimates.call(kind, params, idJson, opts)
              : await (isVerifiedStateRead(method) ? this.state : this.blocks).call(kind, method, params, idJson, opts)
      // The gateway's own refusal of a verified call (VERIFY_CALL_TOO_LARGE, VERIFY_GAS_CAPPED, VERIFY_RUN_TIMEOUT): refused.
      this.#count(method, out.verifiedAt !== undefined ? 'verified' : out.node === 'gateway' ? 'refused' : 'passed')
      return out
    } catch (err) {
      // Every node answered the check's call with its error: that is the answer, as a node gives it.
      if (err instanceof NodeErrorAnswer) {
        this.#count(method, 'passed')
        return err.answer.withId(idJson)
      }
      const unverified = err instanceof AnswerUnverified || err instanceof VerificationError
      this.#count(
        method,
        unverified ? 'unverified' : err instanceof LogsRangeTooWide || err instanceof ProofTooWide || err instanceof NodesLack ? 'refused' : 'failed',
      )
      throw err
    }
  }

  /** A verified read refused before any node was asked (a logs range past its bound, at admission): counted as `refused`. */
  refused(method: string): void {
    this.#count(method, 'refused')
  }

  #count(method: string, outcome: VerifyOutcome): void {
    let byOutcome = this.outcomes.get(method)
    if (byOutcome === undefined) this.outcomes.set(method, (byOutcome = new Map()))
    byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1)
  }
}
