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
import { AnswerUnverified } from '../verified/first-passing.js'
import { NodesLack } from '../verified/block-reads.js'
import { LogsRangeTooWide } from '../verified/log-reads.js'
import { ProofTooWide } from '../verified/state-reads.js'
import { VerificationError } from '../verify/errors.js'
import { HEAVY_RETRY_AFTER_S, HeavyCallsBusy } from './heavy-calls.js'

/**
 * The gateway error a client gets when the upstream could not serve its call: the registry code
 * by cause, and a message that says what the node did (`HTTP 500 with a non-JSON body`, `the
 * connection was reset`), not which node: node names and what they sent are the operator's, and
 * go to the log (FaultLog).
 * @example gatewayErrorFor(new NoHealthyUpstream({ network: 'eth-1', kind: 'full' }), 'eth-1').http // 503
 */
export function gatewayErrorFor(err: unknown, network: string): GatewayError {
  if (err instanceof NoHealthyUpstream) {
    return new GatewayError(
      'NO_HEALTHY_UPSTREAM',
      `No healthy ${err.kind} node for ${network} right now${err.why ? ` (${err.why})` : ''}; retry with backoff`,
      { cause: err },
    )
  }
  if (err instanceof NodeBusy) {
    return new GatewayError(
      'NODES_BUSY',
      `The nodes for this call are at capacity: it waited ${err.waitedMs} ms for a free slot and got none; retry after the time in Retry-After, with backoff`,
      { cause: err },
    )
  }
  if (err instanceof MethodServedByNoNode) {
    return new GatewayError(
      'METHOD_NOT_FOUND',
      `Method not found: no ${err.kind} node of ${network} serves ${err.method} (each said so within the last few minutes)`,
      { cause: err },
    )
  }
  if (err instanceof NodesDisagree) {
    return new GatewayError(
      'NODES_DISAGREE',
      `The nodes disagree on this answer: ${err.what}; retry (a node may be catching up), and report it if it persists`,
      {
        cause: err,
      },
    )
  }
  if (err instanceof ProofTooWide) {
    return new GatewayError('VERIFY_PROOF_TOO_WIDE', `This eth_getProof names more storage slots than this gateway proves in one call: ${err.what}`, {
      cause: err,
    })
  }
  if (err instanceof NodesLack) {
    return new GatewayError('VERIFY_NODES_LACK', `This verified read needs of the network's nodes what none of them serves: ${err.what}`, {
      cause: err,
    })
  }
  if (err instanceof LogsRangeTooWide) {
    return new GatewayError('VERIFY_RANGE_TOO_WIDE', `This eth_getLogs range is wider than this gateway proves in one call: ${err.what}`, { cause: err })
  }
  if (err instanceof AnswerUnverified || err instanceof VerificationError) {
    const what = err instanceof AnswerUnverified ? err.what : `${err.code}: ${err.subject}: ${err.expected}, got ${err.got}`
    return new GatewayError(
      'ANSWER_UNVERIFIED',
      `No node's answer passed this gateway's check (${what}); retry (a node may be catching up), and report it if it persists`,
      { cause: err },
    )
  }
  if (err instanceof UpstreamTimeout) {
    return new GatewayError(
      'UPSTREAM_TIMEOUT',
      `The node did not answer in time: ${err.what}; retry, or split the call (for eth_getLogs, a narrower block range)`,
      { cause: err },
    )
  }
  if (err instanceof UpstreamAnswerTooLarge) {
    return new GatewayError(
      'UPSTREAM_ANSWER_TOO_LARGE',
      `The node sent ${err.what} bytes that this gateway passes on (limits.maxUpstreamBytes); ask for less: a narrower block range, fewer calls in a batch`,
      { cause: err },
    )
  }
  if (err instanceof HeavyCallsBusy) {
    return new GatewayError(
      'HEAVY_CALLS_BUSY',
      `Too many heavy calls at once: this key may have ${err.max} heavy calls (traces, debug_trace*, eth_getLogs, eth_getBlockReceipts, methods forwarded outside the method table…) running at once, ` +
        `and none finished within ${err.waitedMs} ms; retry after ${HEAVY_RETRY_AFTER_S} s, or send them one after another`,
      { cause: err, headers: { 'Retry-After': String(HEAVY_RETRY_AFTER_S) } },
    )
  }
  if (err instanceof UpstreamTransportError) {
    return new GatewayError('UPSTREAM_ERROR', `The node failed to answer: ${err.what}; retry with backoff`, { cause: err })
  }
  return new GatewayError('UPSTREAM_ERROR', undefined, { cause: err })
}
