import type { Answer } from './answer.js'
import { nodeErrorOf } from './node-error.js'

/**
 * A full node's answer that says the state or history asked for is pruned: the call is worth one
 * more try on an archive node (old state behind a block hash, or a head not known yet). Read from
 * each client's own error, code and the start of its message (docs/http.md, "Pruned state"), never
 * from words anywhere in it: a revert reason that said "pruned" sent a full-node call to the
 * archive node, and a revert's message starts "execution reverted" (code 3 or -32000, with data).
 *
 * | client | code | message starts with |
 * |---|---|---|
 * | geth (hash scheme), and forks | -32000 | `missing trie node <hex>` |
 * | geth (path scheme) | -32000 | `historical state <hex> is not available`, `historical state not available` |
 * | geth (traces) | -32000 | `required historical state unavailable` |
 * | Erigon 3 | -32000 | `old data not available due to pruning` |
 * | Nethermind | -32002 | `No state available for block ` |
 * | Besu | -32000 | `World state unavailable` |
 * | reth | -32000, -32603 | `state at block #<n> is pruned` |
 * | anvil (`--prune-history`) | -32602 | `BlockOutOfRangeError: block height is <h> but requested was <n>`, with n below h (above h: the block is not there yet) |
 * | any (EIP-4444 history expiry) | 4444 | (any) |
 * | Ganache 7 | (none) | keeps every state; its -32700 `header not found` (seen from Ganache 7.9.2) is a block it does not have yet, never pruned state, as geth's -32000 `header not found` is |
 * | Hardhat 3 (EDR) | (none) | keeps every state; its -32000 `Received invalid block tag <n>. Latest block number is <h>` (with its message again as data; seen from Hardhat 3.18, EDR 0.22) is a block it does not have yet, never pruned state |
 */
const PRUNED_BY_CODE: ReadonlyMap<number, RegExp> = new Map([
  [
    -32000,
    /^(?:missing trie node [0-9a-f]+ |historical state (?:[0-9a-f]+ is )?not available|required historical state unavailable|old data not available due to pruning|World state unavailable|state at block #\d+ is pruned$)/,
  ],
  [-32002, /^No state available for block /],
  [-32603, /^state at block #\d+ is pruned$/],
])

const ANVIL_OUT_OF_RANGE = /^BlockOutOfRangeError: block height is (\d+) but requested was (\d+)$/

/**
 * Whether a node's error answer says the state is pruned (error answers only: the caller checks
 * `isError` first, so an ordinary answer costs nothing here).
 * @example
 * saysStatePruned(answer) // true for {"code":-32000,"message":"missing trie node 1a2b (path ) <nil>"}
 */
export function saysStatePruned(answer: Answer): boolean {
  const error = nodeErrorOf(answer)
  if (error === undefined || error.hasData) return false
  if (error.code === 4444) return true
  if (error.code === -32602) {
    const range = ANVIL_OUT_OF_RANGE.exec(error.message)
    return range !== null && Number(range[2]) < Number(range[1])
  }
  return PRUNED_BY_CODE.get(error.code)?.test(error.message) === true
}
