import type { Answer } from '../upstream/answer.js'
import { nodeErrorOf } from '../upstream/node-error.js'

/**
 * The node's own "no such filter" answer to a filter the gateway pinned to it: the node dropped it
 * (idle past its own time-out, or restarted), so the key's share has room again. Read from each
 * client's error, code and the start of its message, never from `data`:
 *
 * | client | code | message |
 * |---|---|---|
 * | geth, Erigon, reth, anvil | -32000 | `filter not found` |
 * | Besu | -32000 | `Filter not found` |
 * | Nethermind | -32000 | `Filter with id: <id> does not exist.` |
 * | Ganache 7 | -32700 | `filter not found` (with a `stack`; seen from Ganache 7.9.2) |
 * | Hardhat 3 (EDR) | no error | the result `null` to `eth_getFilterChanges` and `eth_getFilterLogs` (seen from Hardhat 3.18, EDR 0.22; a filter it holds is polled as an array, empty or not) |
 *
 * A wrong reading costs only the key's own pin (its next poll of that id is "filter not found").
 * @example
 * saysFilterGone(answer) // true for {"code":-32000,"message":"filter not found"}
 */
export function saysFilterGone(answer: Answer): boolean {
  if (!answer.isError) return answer.bytes === undefined && answer.text.length < SHORT && NULL_RESULT.test(answer.text)
  const error = nodeErrorOf(answer)
  if (error === undefined || error.hasData) return false
  if (error.code === -32700) return error.message === 'filter not found'
  return error.code === -32000 && FILTER_GONE.test(error.message)
}

const FILTER_GONE = /^(?:filter not found|Filter with id: \S+ does not exist)/i
/** A poll's answer whose result is `null`: no filter answers so (see Hardhat above). */
const NULL_RESULT = /"result"\s*:\s*null\s*[,}]/
/** A `null` result is a short answer; a longer one is not read. */
const SHORT = 200
