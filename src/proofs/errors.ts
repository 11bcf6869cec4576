import { CodedError } from '../errors/coded-error.js'
import { failedCheckText } from '../errors/failed-checks.js'
import type { VerifyCheck } from '../errors/verify-check.js'

export type { VerifyCheck }

/**
 * An answer that failed a check: `code` names the check, `subject` the field, root or proof that
 * failed, `expected` what the trusted side (header, root, hash) requires and `got` what the answer
 * gave. A node's answer that throws this is never handed on.
 * @example
 * try { await verifyStateProof(proof, header.stateRoot) } catch (err) {
 *   if (err instanceof VerificationError) failures.inc({ node, check: err.code })
 * }
 */
export class VerificationError extends CodedError<VerifyCheck> {
  override readonly name: string = 'VerificationError'
  readonly subject: string
  readonly expected: string
  readonly got: string
  constructor(check: VerifyCheck, subject: string, expected: string, got: string, options?: { cause?: unknown }) {
    super(check, failedCheckText({ check, subject, expected, got }), options)
    this.subject = subject
    this.expected = expected
    this.got = got
  }
}

/** A trie proof whose nodes do not lead from the root to the key (a node altered, missing or of another trie): checkFailure('PROOF_NOT_LINKED'). */
export class ProofError extends VerificationError {
  override readonly name: string = 'ProofError'
}
