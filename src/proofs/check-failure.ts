import { FAILED_CHECKS, type FactsOfCheck, type FailedCheckName } from '../errors/failed-checks.js'
import type { CheckSaid } from '../errors/verify-check.js'
import { ProofError, VerificationError } from './errors.js'

/**
 * The VerificationError of a failed check of FAILED_CHECKS, its words filled with the facts (a
 * ProofError for a trie proof that does not link), so that a check says what failed and the words
 * stay in one place.
 * @example throw checkFailure('HEADER_HASH_FROM_FIELDS', { block: header.number, claimed, computed })
 */
export function checkFailure<N extends FailedCheckName>(name: N, facts: FactsOfCheck<N>, options?: { cause?: unknown }): VerificationError {
  // Each entry's words take its own facts; TypeScript cannot narrow the union by name here.
  const said = (FAILED_CHECKS[name].says as (facts: FactsOfCheck<N>) => CheckSaid)(facts)
  const Failure = name === 'PROOF_NOT_LINKED' ? ProofError : VerificationError
  return new Failure(said.check, said.subject, said.expected, said.got, options)
}
