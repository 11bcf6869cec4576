import { refusal } from '../errors/messages.js'
import { GatewayError } from '../errors/registry.js'
import {
  MethodServedByNoNode,
  NodeBusy,
  NodesDisagree,
  NoHealthyUpstream,
  UpstreamAnswerTooLarge,
  UpstreamTimeout,
  UpstreamTransportError,
} from '../upstream/errors.js'
import { AnswerUnverified } from '../verified-reads/errors.js'
import { NodesLack } from '../verified-reads/errors.js'
import { LogsRangeTooWide } from '../verified-reads/errors.js'
import { ProofTooWide } from '../verified-reads/errors.js'
import { VerificationError } from '../proofs/errors.js'
import { HeavyCallsBusy } from './errors.js'
import { HEAVY_RETRY_AFTER_S } from './heavy-calls.js'

/**
 * The gateway error a client gets when the upstream could not serve its call: the registry code
 * by cause, and a message that says what the node did (`HTTP 500 with a non-JSON body`, `the
 * connection was reset`), not which node: node names and what they sent are the operator's, and
 * go to the log (FaultLog).
 * @example gatewayErrorFor(new NoHealthyUpstream({ network: 'eth-1', kind: 'full' }), 'eth-1').http // 503
 */
export function gatewayErrorFor(err: unknown, network: string): GatewayError {
  const cause = { cause: err }
  if (err instanceof NoHealthyUpstream) return refusal('NO_HEALTHY_NODE', { kind: err.kind, network, why: err.why }, cause)
  if (err instanceof NodeBusy) return refusal('NODES_AT_CAPACITY', { waitedMs: err.waitedMs }, cause)
  if (err instanceof MethodServedByNoNode) return refusal('NO_NODE_SERVES_METHOD', { kind: err.kind, network, method: err.method }, cause)
  if (err instanceof NodesDisagree) return refusal('NODES_DISAGREE', { what: err.what }, cause)
  if (err instanceof ProofTooWide) return refusal('PROOF_TOO_WIDE', { what: err.what }, cause)
  if (err instanceof NodesLack) return refusal('NODES_LACK', { what: err.what }, cause)
  if (err instanceof LogsRangeTooWide) return refusal('LOGS_RANGE_TOO_WIDE', { what: err.what }, cause)
  if (err instanceof AnswerUnverified) return refusal('ANSWER_UNVERIFIED', { what: err.what }, cause)
  if (err instanceof VerificationError) {
    return refusal('ANSWER_FAILED_CHECK', { check: err.code, subject: err.subject, expected: err.expected, got: err.got }, cause)
  }
  if (err instanceof UpstreamTimeout) return refusal('NODE_TIMED_OUT', { what: err.what }, cause)
  if (err instanceof UpstreamAnswerTooLarge) return refusal('NODE_ANSWER_TOO_LARGE', { what: err.what }, cause)
  if (err instanceof HeavyCallsBusy) {
    const retryAfterS = HEAVY_RETRY_AFTER_S
    return refusal('HEAVY_CALLS_BUSY', { max: err.max, waitedMs: err.waitedMs, retryAfterS }, { cause: err, headers: { 'Retry-After': String(retryAfterS) } })
  }
  if (err instanceof UpstreamTransportError) return refusal('NODE_FAILED', { what: err.what }, cause)
  return new GatewayError('UPSTREAM_ERROR', undefined, cause)
}
