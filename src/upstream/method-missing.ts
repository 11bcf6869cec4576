import { METHODS } from '../rpc/method-table.js'
import type { Answer } from './answer.js'
import { nodeErrorOf } from './node-error.js'

/**
 * Whether a node said it does not serve a method, read from the JSON-RPC error code each client
 * gives for it (docs/upstream-selection.md, "What counts as method not found"), never from words
 * in a message: an `eth_call` whose code reverts with the reason "method not found" made every node
 * at the head look as if it lacked eth_call, and every other tenant's calls went to a node behind.
 *
 * | client | answer to a method it does not serve |
 * |---|---|
 * | geth, Erigon | -32601 `the method <m> does not exist/is not available` |
 * | Nethermind | -32601 for an unknown method; -32600 `The method '<m>' is found but the namespace '<ns>' is disabled…` (or `…is found in namespace '<ns>'… but is disabled for…`) |
 * | Besu | -32601 `Method not found`; -32604 `Method not enabled` (its namespace is off) |
 * | reth, anvil over HTTP | -32601 `Method not found` |
 * | EIP-1474 | -32004 `Method not supported` |
 * | anvil over WebSocket | -32602 `data did not match any variant of untagged enum EthRpcCall`, also its answer to a known method with params it cannot read: undecided (see undecidedOverWs) |
 * | Hardhat 3 (EDR) | -32004 `Method <m> is not supported`, its message repeated as `data: {"message": …}` (seen from Hardhat 3.18, EDR 0.22; eth_getBlockReceipts and eth_createAccessList among them) |
 * | Ganache 7 | -32700 `The method <m> does not exist/is not available` (with a `stack`; seen from Ganache 7.9.2, eth_getBlockReceipts among them) |
 *
 * An error with `data` never counts (revert data), but for Hardhat's -32004 whose data is only its
 * message again (no contract writes a -32004); a code alone is enough but for Nethermind's
 * -32600 and Ganache's -32700, which must name the very method called in their message (a
 * tenant's params never reach those messages: both are written before the params are read; and
 * Ganache's -32700 is also its answer to a block it does not have, an unknown filter, a bad
 * transaction).
 */
export function saysMethodMissing(method: string, answer: Answer): boolean {
  const error = nodeErrorOf(answer)
  if (error === undefined || (error.hasData && !(error.code === -32004 && error.dataIsMessage))) return false
  switch (error.code) {
    case -32601:
    case -32004:
    case -32604:
      return true
    case -32600:
      return error.message.startsWith(`The method '${method}' is found `)
    case -32700:
      return error.message === `The method ${method} does not exist/is not available`
    default:
      return false
  }
}

/** anvil's WebSocket answer to an unknown method, and to a known one whose params it cannot read. */
const ANVIL_WS_UNDECIDED = 'data did not match any variant of untagged enum EthRpcCall'

/**
 * anvil over WebSocket answers a method it does not have exactly as it answers a known method with
 * params it cannot read (both -32602, the message above): a tenant's bad params must not make a
 * node look as if it lacked `eth_call`. The node then asks the same node over HTTP for the method
 * with no params (UpstreamNode), where anvil tells the two apart (-32601 for an unknown method,
 * whatever the params): the tenant's params are not in that question, so they cannot decide it.
 */
export function undecidedOverWs(answer: Answer): boolean {
  if (answer.bytes !== undefined || answer.text.length > 200 || !answer.text.includes(ANVIL_WS_UNDECIDED)) return false
  const error = nodeErrorOf(answer)
  return error !== undefined && error.code === -32602 && error.message === ANVIL_WS_UNDECIDED && !error.hasData
}

/**
 * A method of the method table: the only names whose absence on a node is remembered (see
 * MethodsLacking). Other names come from clients (any name in a served namespace, or the operator's
 * allowed patterns), and a tenant must not fill the nodes' memory with made-up ones.
 */
export function isListedMethod(method: string): boolean {
  return Object.hasOwn(METHODS, method)
}
