import type { NodeKind } from '../events/types.js'

/**
 * Which methods the gateway serves and which node kind each needs. The spec lists the common set
 * (eth, net, web3, txpool, debug, trace); every other method of those namespaces is passed to the
 * node, which answers -32601 itself when it does not know it. What would expose or change the
 * node itself is refused here, before it reaches a node shared by every customer.
 */
export type MethodRule =
  | { ok: true; needs: NodeKind | 'any' }
  | { ok: false; message: string }

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

const cache = new Map<string, MethodRule>()

export function methodRule(method: string): MethodRule {
  let rule = cache.get(method)
  if (rule === undefined) {
    rule = decideRule(method)
    // Bounded: a client sending random method names must not grow this without end.
    if (cache.size < 4096) cache.set(method, rule)
  }
  return rule
}

function decideRule(method: string): MethodRule {
  const sep = method.indexOf('_')
  const ns = sep > 0 ? method.slice(0, sep) : ''
  if (!SERVED_NAMESPACES.has(ns) || sep === method.length - 1) {
    return {
      ok: false,
      message: `Method not found: ${JSON.stringify(method.slice(0, 64))} is not served; methods are <namespace>_<name> in eth, net, web3, txpool, debug or trace`,
    }
  }
  if (method === 'eth_subscribe' || method === 'eth_unsubscribe') {
    return { ok: false, message: `Method not found: ${method} needs a WebSocket connection; connect to /ws/<network>?apikey=<API_KEY>` }
  }
  if (REFUSED.has(method) || method.startsWith('debug_set')) {
    return { ok: false, message: `Method not found: ${method} is not available through this gateway (it would use or change the node's own accounts or settings); sign locally and use eth_sendRawTransaction` }
  }
  if (ns === 'trace') return { ok: true, needs: 'archive' }
  return { ok: true, needs: 'any' }
}
