import { METHODS, REFUSED, REFUSED_NAMESPACES, SERVED_NAMESPACES, type MethodSpec } from './method-table.js'

/**
 * Whether a method is served on a transport, and what it needs (src/rpc/method-table.ts). A
 * refusal carries the message the client gets with -32601: which method, and why.
 */
export type MethodRule =
  /** `local`: the gateway answers it itself (subscriptions over WebSocket, shared between clients: src/ws/). */
  { ok: true; spec: MethodSpec; local?: true } | { ok: false; message: string }

export type Transport = 'http' | 'ws'

const cache = { http: new Map<string, MethodRule>(), ws: new Map<string, MethodRule>() }

export function methodRule(method: string, transport: Transport = 'http'): MethodRule {
  const byMethod = cache[transport]
  let rule = byMethod.get(method)
  if (rule === undefined) {
    rule = decideRule(method, transport)
    // Bounded: a client sending random method names must not grow this without end.
    if (byMethod.size < 4096) byMethod.set(method, rule)
  }
  return rule
}

function decideRule(method: string, transport: Transport): MethodRule {
  const shown = JSON.stringify(method.length > 64 ? `${method.slice(0, 64)}…` : method)
  const spec = METHODS[method]
  if (spec !== undefined) {
    if (transport === 'http' && spec.local !== undefined) {
      return { ok: false, message: `Method not found: ${method} needs a WebSocket connection; connect to /ws/<network>?apikey=<API_KEY>` }
    }
    if (spec.local !== undefined) return { ok: true, spec, local: true }
    return { ok: true, spec }
  }
  const refused = REFUSED[method]
  if (refused !== undefined) return { ok: false, message: `Method not found: ${method} is not available through this gateway: it ${refused}` }
  const sep = method.indexOf('_')
  const ns = sep > 0 ? method.slice(0, sep) : ''
  if (method.startsWith('debug_set'))
    return { ok: false, message: `Method not found: ${method} is not available through this gateway: it changes the node's settings` }
  const refusedNs = REFUSED_NAMESPACES[ns]
  if (refusedNs !== undefined)
    return { ok: false, message: `Method not found: ${ns}_* methods are not available through this gateway: the namespace ${refusedNs}` }
  if (SERVED_NAMESPACES.includes(ns)) {
    return { ok: false, message: `Method not found: ${shown} is not a method this gateway serves in the ${ns} namespace; see the method list in docs/http.md` }
  }
  return { ok: false, message: `Method not found: ${shown}; methods are <namespace>_<name> in ${SERVED_NAMESPACES.join(', ')}` }
}
