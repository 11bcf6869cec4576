import { parseTransaction, type Hex } from 'viem'
import { MESSAGES } from '../errors/messages.js'
import type { ContractProblem, RuleReads } from '../errors/problem-words.js'
import { ERRORS, errorResponseJson, type ErrorCode } from '../errors/registry.js'
import { compiledOf, ipAllowed, methodAllowed, userAgentAllowed, type KeyRestrictions } from '../keys/key-restrictions.js'
import { METHODS } from '../rpc/method-table.js'
import type { RpcCall } from '../rpc/parse.js'
import type { Refused } from './batch-plan.js'
import type { KeyContext } from './key-directory.js'

/** The rule of a key that refused a call or a request (the `rule` of KeyRuleRefused and of the metric). */
export type KeyRule = 'method' | 'contract' | 'ip' | 'user-agent'

/** Where a call counts its refusals: the usage meter (KeyRuleRefused events, the metric). */
export interface KeyRuleSink {
  keyRuleRefused(accountId: string, keyId: string, network: string, rule: KeyRule, calls: number): void
}

/**
 * Where a method's params name the address a contract rule matches: the `to` of a transaction
 * object, an account, a logs filter's `address`, the `to` of a signed transaction, or the filter
 * of a `logs` subscription. Methods of the table absent here name no address (blocks, receipts,
 * eth_blockNumber): the method rule alone governs them.
 */
type Target = 'tx-to' | 'account' | 'filter' | 'raw-tx' | 'subscribe' | 'unchecked'

/**
 * The contract rule, method by method (docs/keys.md has the same table for clients). `unchecked`:
 * methods that name addresses a contract rule cannot describe (several calls at once, a sender, a
 * range of storage, a trace filter), refused under a contract rule rather than let through.
 */
export const CONTRACT_TARGETS: Readonly<Record<string, Target>> = Object.freeze({
  eth_call: 'tx-to',
  eth_estimateGas: 'tx-to',
  eth_createAccessList: 'tx-to',
  eth_fillTransaction: 'tx-to',
  debug_traceCall: 'tx-to',
  trace_call: 'tx-to',
  eth_getBalance: 'account',
  eth_getCode: 'account',
  eth_getStorageAt: 'account',
  eth_getTransactionCount: 'account',
  eth_getProof: 'account',
  eth_getAccount: 'account',
  eth_getAccountInfo: 'account',
  eth_getLogs: 'filter',
  eth_newFilter: 'filter',
  eth_sendRawTransaction: 'raw-tx',
  trace_rawTransaction: 'raw-tx',
  eth_subscribe: 'subscribe',
  eth_simulateV1: 'unchecked',
  eth_callMany: 'unchecked',
  debug_traceCallMany: 'unchecked',
  trace_callMany: 'unchecked',
  eth_getStorageValues: 'unchecked',
  debug_storageRangeAt: 'unchecked',
  trace_filter: 'unchecked',
  txpool_contentFrom: 'unchecked',
  eth_getTransactionBySenderAndNonce: 'unchecked',
})

/** A refusal of a key rule: which rule and the message that names it. */
export interface RuleRefusal {
  readonly rule: KeyRule
  readonly code: ErrorCode
  readonly message: string
}

/**
 * The per-call rules of a key (methods, contracts) for one call, or undefined when they let it
 * through. Pure: the key's restrictions and the call. A key without restrictions costs one
 * property read.
 * @example
 * keyCallRefusal({ methods: ['eth_call'] }, { method: 'eth_sendRawTransaction', params: ['0x…'], idJson: '1' })
 * // { rule: 'method', code: 'KEY_METHOD_NOT_ALLOWED', message: '… eth_sendRawTransaction …' }
 */
export function keyCallRefusal(
  restrictions: KeyRestrictions | undefined,
  call: Pick<RpcCall, 'method' | 'params'>,
  whose: 'key' | 'token' = 'key',
): RuleRefusal | undefined {
  if (restrictions === undefined) return undefined
  const c = compiledOf(restrictions)
  // eth_unsubscribe only ends what the key itself made: a method rule never keeps a client from it.
  if (!methodAllowed(c, call.method) && call.method !== 'eth_unsubscribe') {
    const message =
      c.source.methods !== undefined
        ? MESSAGES.KEY_METHOD_NOT_LISTED.text({ whose, method: call.method, allowed: c.source.methods })
        : MESSAGES.KEY_METHOD_DENIED.text({ whose, method: call.method, denied: c.source.deniedMethods! })
    return { rule: 'method', code: 'KEY_METHOD_NOT_ALLOWED', message }
  }
  if (c.contracts === undefined) return undefined
  const problem = contractProblem(c.contracts, call.method, call.params)
  if (problem === undefined) return undefined
  const message = MESSAGES.KEY_CONTRACT_NOT_LISTED.text({ whose, problem, allowed: c.source.contracts! })
  return { rule: 'contract', code: 'KEY_CONTRACT_NOT_ALLOWED', message }
}

/**
 * The request rules of a key (client IP, user agent), checked once per HTTP request and per
 * WebSocket upgrade, after its origin. The IP is asked for only when the key has an IP rule (over
 * HTTP decoding it costs an allocation); it is the one `trustProxy` decides (the socket's peer, or
 * the last X-Forwarded-For entry behind a trusted proxy).
 */
export function requestRefusal(restrictions: KeyRestrictions, req: { userAgent: () => string; ip: () => string }): RuleRefusal | undefined {
  const c = compiledOf(restrictions)
  if (c.ips !== undefined) {
    const ip = req.ip()
    if (!ipAllowed(c, ip)) {
      return {
        rule: 'ip',
        code: 'KEY_IP_NOT_ALLOWED',
        message: MESSAGES.KEY_IP_NOT_LISTED.text({ allowed: c.source.ips!, ip }),
      }
    }
  }
  const userAgent = c.userAgents === undefined ? '' : req.userAgent()
  if (!userAgentAllowed(c, userAgent)) {
    return {
      rule: 'user-agent',
      code: 'KEY_USER_AGENT_NOT_ALLOWED',
      message: MESSAGES.KEY_USER_AGENT_NOT_LISTED.text({ allowed: c.source.userAgents!, userAgent }),
    }
  }
  return undefined
}

/**
 * keyCallRefusal for the dispatcher: the call's answer when a rule refuses it, counted under its
 * rule. Called once for each call, single or in a batch, over HTTP and WebSocket (an
 * eth_subscribe is a call too, so a `logs` subscription meets the contract rule here).
 */
export function refuseByKeyRules(key: KeyContext, network: string, call: RpcCall, sink: KeyRuleSink, token?: KeyRestrictions): Refused | undefined {
  const restrictions = key.record.restrictions
  if (restrictions === undefined && token === undefined) return undefined
  // The key's rules, then the token's: a token's lists only take away from what the key allows.
  const refusal = keyCallRefusal(restrictions, call) ?? keyCallRefusal(token, call, 'token')
  if (refusal === undefined) return undefined
  sink.keyRuleRefused(key.account.accountId, key.record.keyId, network, refusal.rule, 1)
  const spec = ERRORS[refusal.code]
  return { refused: true, status: spec.http, body: errorResponseJson(call.idJson ?? 'null', spec.rpc, refusal.message), invalid: false }
}

/** Why the call does not meet the contract rule, or undefined when it does (or names no address). */
function contractProblem(allowed: ReadonlySet<string>, method: string, params: unknown): ContractProblem | undefined {
  // Own properties only: a method named `constructor` or `toString` is not in either table.
  const target = Object.hasOwn(CONTRACT_TARGETS, method) ? CONTRACT_TARGETS[method]! : undefined
  if (target === undefined) {
    // A method outside the table (a network's forwardMethods) may name anything: not let through blind.
    return Object.hasOwn(METHODS, method) ? undefined : { problem: 'method-not-in-table', method }
  }
  const list = Array.isArray(params) ? params : undefined
  switch (target) {
    case 'unchecked':
      return { problem: 'names-unchecked', method }
    case 'account':
      return addressProblem(allowed, list?.[0], { method }, 'address')
    case 'tx-to': {
      const tx = list?.[0]
      if (tx === null || typeof tx !== 'object') return { problem: 'no-transaction-object', method }
      const to = (tx as { to?: unknown }).to
      if (to === undefined || to === null) return { problem: 'creation-without-to', method }
      return addressProblem(allowed, to, { method }, 'to')
    }
    case 'filter':
      return filterProblem(allowed, list?.[0], { method })
    case 'raw-tx':
      return rawTxProblem(allowed, list?.[0], method)
    case 'subscribe':
      // Only a logs subscription names addresses; newHeads and pending transactions name none.
      return list?.[0] === 'logs' ? filterProblem(allowed, list[1], { logsSubscription: true }) : undefined
  }
}

function addressProblem(allowed: ReadonlySet<string>, value: unknown, where: RuleReads, member: 'address' | 'to'): ContractProblem | undefined {
  if (typeof value !== 'string') return { problem: 'address-missing', in: where, member }
  return allowed.has(value.toLowerCase()) ? undefined : { problem: 'address-not-listed', in: where, member, address: value }
}

/** A logs filter must name its addresses, and each of them must be listed (a filter of any address reads every contract's logs). */
function filterProblem(allowed: ReadonlySet<string>, filter: unknown, where: RuleReads): ContractProblem | undefined {
  const address = filter !== null && typeof filter === 'object' ? (filter as { address?: unknown }).address : undefined
  const addresses = typeof address === 'string' ? [address] : Array.isArray(address) ? address : []
  if (addresses.length === 0) return { problem: 'filter-without-address', in: where }
  for (const a of addresses) {
    const p = addressProblem(allowed, a, where, 'address')
    if (p !== undefined) return p
  }
  return undefined
}

/** The `to` of a signed transaction, decoded (legacy, EIP-2930, 1559, 4844, 7702). */
function rawTxProblem(allowed: ReadonlySet<string>, raw: unknown, method: string): ContractProblem | undefined {
  if (typeof raw !== 'string' || !raw.startsWith('0x')) return { problem: 'no-signed-transaction', method }
  let to: string | null | undefined
  try {
    to = parseTransaction(raw as Hex).to
  } catch {
    return { problem: 'transaction-undecodable', method }
  }
  if (to === undefined || to === null) return { problem: 'signed-creation', method }
  return addressProblem(allowed, to, { method }, 'to')
}
