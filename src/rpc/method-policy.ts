import type { NodeKind } from '../events/types.js'

/**
 * Which methods the gateway serves and which node kind each needs. The spec lists the common set
 * (eth, net, web3, txpool, debug, trace); every other method of those namespaces is passed to the
 * node, which answers -32601 itself when it does not know it. What would expose or change the
 * node itself is refused here, before it reaches a node shared by every customer.
 */
export type MethodRule =
  /** `local`: the gateway answers it itself (subscriptions, shared between clients: src/ws/). */
  | { ok: true; needs: NodeKind | 'any'; local?: true }
  | { ok: false; message: string }

/** The transport a call came over: some methods only make sense on one of them. */
export type Transport = 'http' | 'ws'

/** Methods that live as long as a WebSocket connection: served by the gateway over WebSocket only. */
const SUBSCRIPTION_METHODS = new Set(['eth_subscribe', 'eth_unsubscribe'])

const SERVED_NAMESPACES = new Set(['eth', 'net', 'web3', 'txpool', 'debug', 'trace'])

/** Methods of served namespaces that sign with, or change, the node's own accounts or settings. */
const REFUSED = new Set([
  'eth_sign',
  'eth_signTransaction',
  'eth_signTypedData',
  'eth_signTypedData_v3',
  'eth_signTypedData_v4',
  'eth_sendTransaction',
  'eth_accounts',
  'eth_coinbase',
  'eth_mining',
  'eth_hashrate',
  'eth_submitWork',
  'eth_submitHashrate',
  'eth_getWork',
])

const caches: Record<Transport, Map<string, MethodRule>> = { http: new Map(), ws: new Map() }

/**
 * Whether `method` is served over `transport` (default HTTP), and by which node kind.
 * @example methodRule('eth_subscribe', 'ws') // { ok: true, needs: 'any', local: true }
 */
export function methodRule(method: string, transport: Transport = 'http'): MethodRule {
  const cache = caches[transport]
  let rule = cache.get(method)
  if (rule === undefined) {
    rule = decideRule(method, transport)
    // Bounded: a client sending random method names must not grow this without end.
    if (cache.size < 4096) cache.set(method, rule)
  }
  return rule
}

function decideRule(method: string, transport: Transport): MethodRule {
  const sep = method.indexOf('_')
  const ns = sep > 0 ? method.slice(0, sep) : ''
  if (!SERVED_NAMESPACES.has(ns) || sep === method.length - 1) {
    return {
      ok: false,
      message: `Method not found: ${JSON.stringify(method.slice(0, 64))} is not served; methods are <namespace>_<name> in eth, net, web3, txpool, debug or trace`,
    }
  }
  if (SUBSCRIPTION_METHODS.has(method)) {
    if (transport === 'ws') return { ok: true, needs: 'any', local: true }
    return { ok: false, message: `Method not found: ${method} needs a WebSocket connection; connect to /ws/<network>?apikey=<API_KEY>` }
  }
  if (REFUSED.has(method) || method.startsWith('debug_set')) {
    return { ok: false, message: `Method not found: ${method} is not available through this gateway (it would use or change the node's own accounts or settings); sign locally and use eth_sendRawTransaction` }
  }
  if (ns === 'trace') return { ok: true, needs: 'archive' }
  return { ok: true, needs: 'any' }
}
