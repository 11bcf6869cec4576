import { refusal } from '../errors/messages.js'
import type { GatewayError } from '../errors/registry.js'
import { type LogsBound, logsBounds } from '../get-logs/logs-range.js'

/**
 * Blocks a verified eth_getLogs proves in one client call, whatever parts the range is split in:
 * each block is a header call to a node and a header hash to compute. Counted over the client's
 * whole call, not per part: a bound per part let 100,000 blocks (50 parts) cost 100,000 header
 * calls for the units of 50 eth_getLogs.
 */
export const VERIFIED_LOGS_MAX_BLOCKS = 2_000

/** What a verified eth_getLogs is charged and whether it is admitted, as known before any node is asked. */
export type LogRangeAdmission = { readonly units: number } | { readonly refuse: GatewayError }

/**
 * The admission of a verified eth_getLogs: refused past VERIFIED_LOGS_MAX_BLOCKS (LOGS_RANGE_TOO_WIDE_TO_PROVE, naming a range
 * that would be proven), else its eth_getLogs units (`logsUnits`, the chunks' as without
 * verification) plus a header call's units for each block of the range (each part's top agreed,
 * the blocks below it linked: one header call a block, less what is kept already). A tag bound (`latest`, `safe`, …) is read as the
 * network's head, as the chunks are: at most what the proof asks. A filter by blockHash, or one
 * whose bounds are not numbers or tags, proves one block, or none (the node's error is the answer).
 * @example
 * verifiedLogsAdmission({ fromBlock: '0x0', toBlock: '0x31' }, 100, { logsUnits: 75, headerUnits: 16 }) // { units: 75 + 50 * 16 }
 */
export function verifiedLogsAdmission(
  filter: unknown,
  head: number | undefined,
  costs: { logsUnits: number; headerUnits: number },
  maxBlocks = VERIFIED_LOGS_MAX_BLOCKS,
): LogRangeAdmission {
  const bounds = logsBounds(filter)
  const num = (b: LogsBound | undefined) => (b === undefined ? undefined : 'n' in b ? b.n : head)
  const from = num(bounds?.from)
  // A numeric top past the head is measured to the head, as the node reads it and the chunks are.
  const top = num(bounds?.to)
  const to = top === undefined || head === undefined ? top : Math.min(top, head)
  if (from === undefined || to === undefined || from > to) return { units: costs.logsUnits }
  const width = to - from + 1
  if (width > maxBlocks) return { refuse: refusal('LOGS_RANGE_TOO_WIDE_TO_PROVE', { blocks: width, from, to, max: maxBlocks }) }
  return { units: costs.logsUnits + width * costs.headerUnits }
}
