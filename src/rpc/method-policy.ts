import { METHODS, REFUSED, REFUSED_NAMESPACES, REFUSED_PREFIXES, SERVED_NAMESPACES, UNLISTED, UNLISTED_TRACE, type MethodSpec } from './method-table.js'

/**
 * Whether a method is served on a transport, and what it needs (src/rpc/method-table.ts). A
 * refusal carries the message the client gets with -32601: which method, and why.
 */
export type MethodRule =
  /** `local`: the gateway answers it itself (subscriptions over WebSocket, shared between clients: src/ws/). */
  { ok: true; spec: MethodSpec; local?: true } | { ok: false; message: string }

export type Transport = 'http' | 'ws'

/**
 * The method rules of one gateway: its configured costs (config `methodCosts`) are put on the
 * entries themselves, once, so that the call path reads a call's cost from the rule it looked up
 * anyway. Each instance keeps its own rules per transport.
 * @example
 * const rules = new MethodRules({ eth_call: 30 })
 * const r = rules.rule('eth_call', 'http') // r.ok && r.spec.cost === 30
 */
export class MethodRules {
  readonly #costs: Readonly<Record<string, number>>
  readonly #cache = { http: new Map<string, MethodRule>(), ws: new Map<string, MethodRule>() }

  constructor(costs: Readonly<Record<string, number>> = {}) {
    this.#costs = costs
  }

  rule(method: string, transport: Transport = 'http'): MethodRule {
    const byMethod = this.#cache[transport]
    let rule = byMethod.get(method)
    if (rule === undefined) {
      rule = decideRule(method, transport)
      if (rule.ok && Object.hasOwn(this.#costs, method)) rule = { ...rule, spec: Object.freeze({ ...rule.spec, cost: this.#costs[method] }) }
      // Bounded: a client sending random method names must not grow this without end.
      if (byMethod.size < 4096) byMethod.set(method, rule)
    }
    return rule
  }
}

/** The rules with the table's own costs. */
const DEFAULT_RULES = new MethodRules()

export function methodRule(method: string, transport: Transport = 'http'): MethodRule {
  return DEFAULT_RULES.rule(method, transport)
}

function decideRule(method: string, transport: Transport): MethodRule {
  const shown = JSON.stringify(method.length > 64 ? `${method.slice(0, 64)}…` : method)
  // Own keys only: `constructor` or `__proto__` must not find Object's.
  const spec = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined
  if (spec !== undefined) {
    if (transport === 'http' && spec.local !== undefined) {
      return { ok: false, message: `Method not found: ${method} needs a WebSocket connection; connect to /ws/<network>?apikey=<API_KEY>` }
    }
    if (spec.local !== undefined) return { ok: true, spec, local: true }
    return { ok: true, spec }
  }
  const refused = (Object.hasOwn(REFUSED, method) ? REFUSED[method] : undefined) ?? REFUSED_PREFIXES.find(([prefix]) => method.startsWith(prefix))?.[1]
  if (refused !== undefined) return { ok: false, message: `Method not found: ${method} is not available through this gateway: it ${refused}` }
  const sep = method.indexOf('_')
  const ns = sep > 0 ? method.slice(0, sep) : ''
  const refusedNs = Object.hasOwn(REFUSED_NAMESPACES, ns) ? REFUSED_NAMESPACES[ns] : undefined
  if (refusedNs !== undefined)
    return { ok: false, message: `Method not found: ${ns}_* methods are not available through this gateway: the namespace ${refusedNs}` }
  if (SERVED_NAMESPACES.includes(ns)) {
    // Forwarded only when it looks like a method: a name with spaces, quotes or control characters
    // is no node's method, and the node need not be asked.
    if (METHOD_NAME.test(method)) return { ok: true, spec: ns === 'trace' ? UNLISTED_TRACE : UNLISTED }
    return {
      ok: false,
      message: `Method not found: ${shown} is not a method name: <namespace>_<name>, letters, digits and _ only, at most 64 characters after the namespace`,
    }
  }
  return { ok: false, message: `Method not found: ${shown}; methods are <namespace>_<name> in ${SERVED_NAMESPACES.join(', ')}` }
}

/** What an unlisted method's name must look like to be forwarded (geth's are camelCase). */
const METHOD_NAME = /^[a-z0-9]+_[A-Za-z][A-Za-z0-9_]{0,63}$/
