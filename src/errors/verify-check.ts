/**
 * The checks of src/proofs and src/verified-reads, by name: what a refusal says failed, what
 * metrics will count failures by (per node and check), and what a gateway error will name when no
 * node's answer passes. Here, beside the words of FAILED_CHECKS (failed-checks.ts), which name them.
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

/** What a failed check says (FAILED_CHECKS in failed-checks.ts): a VerificationError's four facts. */
export interface CheckSaid {
  readonly check: VerifyCheck
  readonly subject: string
  readonly expected: string
  readonly got: string
}
