import { CodedError } from '../errors/coded-error.js'

/**
 * The checks of src/proofs, by name: what a refusal says failed, what metrics will count failures
 * by (per node and check), and what a gateway error will name when no node's answer passes.
 */
export type VerifyCheck =
  | 'HEADER_AGREEMENT'
  | 'HEADER_FIELDS'
  | 'HEADER_HASH'
  | 'ACCOUNT_PROOF'
  | 'STORAGE_PROOF'
  | 'CODE_HASH'
  | 'TRANSACTION_ENCODING'
  | 'TRANSACTION_HASH'
  | 'TRANSACTION_SENDER'
  | 'TRANSACTION_PLACE'
  | 'TRANSACTIONS_ROOT'
  | 'WITHDRAWALS_ROOT'
  | 'RECEIPTS_ROOT'
  | 'RECEIPT_PLACE'
  | 'LOGS_COMPLETE'
  | 'CALL_RESULT'
  | 'GAS_ESTIMATE'

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
    super(check, `${check}: ${subject}: expected ${expected}, got ${got}`, options)
    this.subject = subject
    this.expected = expected
    this.got = got
  }
}

/** A trie proof whose nodes do not lead from the root to the key (a node altered, missing or of another trie). */
export class ProofError extends VerificationError {
  override readonly name: string = 'ProofError'
  constructor(check: 'ACCOUNT_PROOF' | 'STORAGE_PROOF', subject: string, root: string, options?: { cause?: unknown }) {
    super(check, subject, `proof nodes linked from root ${root}`, 'nodes that do not lead to the key from that root', options)
  }
}
