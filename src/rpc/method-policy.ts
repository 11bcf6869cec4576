import { MESSAGES } from '../errors/messages.js'
import { METHODS, SERVED_NAMESPACES, UNLISTED, UNLISTED_TRACE, type MethodSpec } from './method-table.js'
import { NODE_OPERATING_METHODS, REFUSED_NAMESPACES, REFUSED_PREFIXES } from './node-operating-methods.js'
import { ForwardMethods } from './forward-methods.js'

/**
 * Whether a method is served on a transport, and what it needs (src/rpc/method-table.ts). A
 * refusal carries the message the client gets with -32601: which method, and why.
 */
export type MethodRule =
  /** `local`: the gateway answers it itself (subscriptions over WebSocket, shared between clients: src/ws/). */
  | { ok: true; spec: MethodSpec; local?: true }
  /**
   * `forwardable`: not in the table and refused by no rule: a network whose forwardMethods allows
   * it forwards it (MethodRules.rule with the network); the message is for the others.
   */
  | { ok: false; message: string; forwardable?: true }

export type Transport = 'http' | 'ws'

/**
 * The method rules of one gateway: its configured costs (config `methodCosts`) are put on the
 * entries themselves, once, so that the call path reads a call's cost from the rule it looked up
 * anyway; and each network's forwardMethods, for the methods the table does not list. Each
 * instance keeps its own rules per transport: a listed method is one Map lookup, whatever the
 * network; an unlisted one a second, per network.
 * @example
 * const rules = new MethodRules({ eth_call: 30 })
 * const r = rules.rule('eth_call', 'http') // r.ok && r.spec.cost === 30
 * rules.apply({ forwardMethods: { 'eth-1': ['debug_dumpBlock'] } })
 * rules.rule('debug_dumpBlock', 'http', 'eth-1').ok // true; on any other network, -32601
 */
export class MethodRules {
  readonly #costs: Readonly<Record<string, number>>
  readonly #cache = { http: new Map<string, MethodRule>(), ws: new Map<string, MethodRule>() }
  /** Each network's allowlist for unlisted methods, and the rules it gave (per transport), by network. */
  #forward = new Map<string, { allowed: ForwardMethods; http: Map<string, MethodRule>; ws: Map<string, MethodRule> }>()

  constructor(costs: Readonly<Record<string, number>> = {}, forwardMethods: Readonly<Record<string, readonly string[] | undefined>> = {}) {
    this.#costs = costs
    this.apply({ forwardMethods })
  }

  /**
   * Each network's forwardMethods (config `networks.<slug>.forwardMethods`), at start and at each
   * reload: the rules of unlisted methods are decided again from the next call on.
   */
  apply(next: { forwardMethods: Readonly<Record<string, readonly string[] | undefined>> }): void {
    const byNetwork = next.forwardMethods
    const forward = new Map<string, { allowed: ForwardMethods; http: Map<string, MethodRule>; ws: Map<string, MethodRule> }>()
    for (const [network, entries] of Object.entries(byNetwork)) {
      const allowed = new ForwardMethods(entries ?? [])
      if (!allowed.empty) forward.set(network, { allowed, http: new Map(), ws: new Map() })
    }
    this.#forward = forward
  }

  rule(method: string, transport: Transport = 'http', network?: string): MethodRule {
    const byMethod = this.#cache[transport]
    let rule = byMethod.get(method)
    if (rule === undefined) {
      rule = this.#priced(method, decideRule(method, transport))
      // Bounded: a client sending random method names must not grow this without end.
      if (byMethod.size < RULES_CACHED) byMethod.set(method, rule)
    }
    if (rule.ok || rule.forwardable !== true || network === undefined) return rule
    return this.#forwarded(method, transport, network, rule)
  }

  /** An unlisted method on a network: forwarded when its forwardMethods allows it, else the refusal. */
  #forwarded(method: string, transport: Transport, network: string, refusal: MethodRule): MethodRule {
    const forward = this.#forward.get(network)
    if (forward === undefined) return refusal
    const byMethod = forward[transport]
    let rule = byMethod.get(method)
    if (rule === undefined) {
      rule = forward.allowed.allows(method) ? this.#priced(method, { ok: true, spec: method.startsWith('trace_') ? UNLISTED_TRACE : UNLISTED }) : refusal
      if (byMethod.size < RULES_CACHED) byMethod.set(method, rule)
    }
    return rule
  }

  #priced(method: string, rule: MethodRule): MethodRule {
    if (rule.ok && Object.hasOwn(this.#costs, method)) return { ...rule, spec: Object.freeze({ ...rule.spec, cost: this.#costs[method] }) }
    return rule
  }
}

/** Method names whose rule is kept, per transport (and per network for unlisted ones). */
const RULES_CACHED = 4096

/** The rules with the table's own costs. */
const DEFAULT_RULES = new MethodRules()

export function methodRule(method: string, transport: Transport = 'http'): MethodRule {
  return DEFAULT_RULES.rule(method, transport)
}

function decideRule(method: string, transport: Transport): MethodRule {
  // Own keys only: `constructor` or `__proto__` must not find Object's.
  const spec = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined
  if (spec !== undefined) {
    if (transport === 'http' && spec.local !== undefined) {
      return { ok: false, message: MESSAGES.METHOD_NEEDS_WEBSOCKET.text({ method }) }
    }
    if (spec.local !== undefined) return { ok: true, spec, local: true }
    return { ok: true, spec }
  }
  const refused = refusalOf(method)
  if (refused !== undefined) return { ok: false, message: refused }
  if (!METHOD_NAME.test(method)) {
    // A name with spaces, quotes or control characters is no node's method.
    const sep = method.indexOf('_')
    if (sep > 0 && SERVED_NAMESPACES.includes(method.slice(0, sep))) {
      return { ok: false, message: MESSAGES.METHOD_NAME_MALFORMED.text({ method }) }
    }
    return { ok: false, message: MESSAGES.METHOD_NAMESPACE_UNKNOWN.text({ method, served: SERVED_NAMESPACES }) }
  }
  return {
    ok: false,
    forwardable: true,
    message: MESSAGES.METHOD_NOT_FORWARDED.text({ method }),
  }
}

/**
 * Why a method is refused whatever the table or a network's forwardMethods says (it operates,
 * describes or spends from the node), as the client's message; undefined when nothing refuses it.
 */
export function refusalOf(method: string): string | undefined {
  const known = Object.hasOwn(NODE_OPERATING_METHODS, method) ? NODE_OPERATING_METHODS[method].reason : undefined
  const refused = known ?? REFUSED_PREFIXES.find(([prefix]) => method.startsWith(prefix))?.[1]
  if (refused !== undefined) return MESSAGES.METHOD_REFUSED.text({ method, reason: refused })
  const sep = method.indexOf('_')
  const ns = sep > 0 ? method.slice(0, sep) : ''
  const refusedNs = Object.hasOwn(REFUSED_NAMESPACES, ns) ? REFUSED_NAMESPACES[ns] : undefined
  if (refusedNs !== undefined) return MESSAGES.NAMESPACE_REFUSED.text({ namespace: ns, reason: refusedNs })
  return undefined
}

/** What an unlisted method's name must look like to be forwarded (geth's are camelCase). */
const METHOD_NAME = /^[a-z0-9]+_[A-Za-z][A-Za-z0-9_]{0,63}$/
