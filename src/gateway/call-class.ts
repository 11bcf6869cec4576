import type { MethodSpec } from '../rpc/method-table.js'
import { isVerifiedRead } from '../verified-reads/verified-reads.js'

/**
 * What the upstream caller does with a call, decided once per call from the method table, the call
 * and its network (see classify); each class has one handler.
 * - `unlisted`: not in the method table, forwarded by the network's `forwardMethods`: as it is,
 *   heavy, never cached, shared nor hedged (MethodSpec.unlisted).
 * - `pinned`: to one node (a filter lives there) or a filter call: exactly what the client asked,
 *   to exactly that node, never shared nor cached.
 * - `send`: a signed transaction (the table's `path: 'send'`): sent so that an accepted transaction
 *   is never reported as failed, shared between clients.
 * - `logs`: eth_getLogs (`path: 'logs'`): tags resolved, a wide range split in parts.
 * - `verified`: a read the network proves (networks.<slug>.verify): through the cache and in-flight
 *   sharing, then checked against trusted headers (src/verified-reads).
 * - `table`: the method table's own fields: through the cache (when it has a rule) and in-flight
 *   sharing, then the pool, as a heavy call or as a read that may be hedged.
 */
export type CallClass = 'unlisted' | 'pinned' | 'send' | 'logs' | 'verified' | 'table'

/**
 * The class of a call (see CallClass).
 * @param spec the method's entry in the method table (undefined: not listed)
 * @param node the node the call is pinned to, if any
 * @example
 * classify(METHODS.eth_getBalance, undefined, 'reads', 'eth_getBalance') // 'verified'
 */
export function classify(spec: MethodSpec | undefined, node: string | undefined, verify: 'off' | 'reads' | 'calls', method: string): CallClass {
  if (spec === undefined) return 'unlisted'
  if (node !== undefined || spec.filter !== undefined) return 'pinned'
  if (spec.path !== undefined) return spec.path
  return isVerifiedRead(method, verify) ? 'verified' : 'table'
}
