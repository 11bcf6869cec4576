/**
 * How an eth_getLogs call is served, decided from its filter once its block tags are resolved:
 * as it is (a narrow range, a blockHash, or something the node must judge), refused (wider than
 * the configured maximum), or split into chunks fetched in parallel and merged in order. Pure.
 */

export interface GetLogsLimits {
  /** Blocks per chunk: a wider range is split into chunks of this many blocks. */
  readonly chunkBlocks: number
  /** Widest range served in one call (wider: an error naming a range that would work). */
  readonly maxRangeBlocks: number
  /** Most logs one call may return (more: an error naming a range that would work). */
  readonly maxLogs: number
  /** Chunks of one call fetched at once. */
  readonly concurrency: number
}

/** A block bound of the filter: a number, or a tag to resolve against the node. */
export type LogsBound = { readonly n: number } | { readonly tag: 'latest' | 'pending' | 'safe' | 'finalized' }

/** Bounds of the filter, or undefined when the filter is not one to plan (blockHash, malformed). */
export function logsBounds(filter: unknown): { from: LogsBound; to: LogsBound } | undefined {
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) return undefined
  const f = filter as Record<string, unknown>
  if (f.blockHash !== undefined) return undefined
  const from = boundOf(f.fromBlock)
  const to = boundOf(f.toBlock)
  return from && to ? { from, to } : undefined
}

/** Tags both bounds need resolved before the range can be measured (none: measure it as is). */
export function tagsToResolve(bounds: { from: LogsBound; to: LogsBound }): string[] {
  const tags = new Set<string>()
  for (const b of [bounds.from, bounds.to]) if ('tag' in b) tags.add(b.tag)
  // latest..latest (the default, a poll of the newest block) is one block whatever the head is.
  const recent = (b: LogsBound) => 'tag' in b && (b.tag === 'latest' || b.tag === 'pending')
  if (recent(bounds.from) && recent(bounds.to)) return []
  return [...tags]
}

/**
 * Whether the range must be measured against the head before it is planned: its top is a number,
 * which may lie past the head (a client's `toBlock: 0xffffff`), where a node reads to its head, and
 * the range as written would not be served as it is. A narrow numeric range needs no lookup.
 */
export function needsHead(bounds: { from: LogsBound; to: LogsBound }, chunkBlocks: number): boolean {
  if (!('n' in bounds.to)) return false
  return !('n' in bounds.from) || bounds.to.n - bounds.from.n + 1 > chunkBlocks
}

export type LogsPlan =
  | { readonly serve: 'as-is'; readonly from?: number }
  | { readonly serve: 'too-wide'; readonly from: number; readonly to: number; readonly suggestTo: number }
  | { readonly serve: 'split'; readonly from: number; readonly chunks: ReadonlyArray<readonly [number, number]> }

/**
 * The plan for a call whose bounds resolved to block numbers (`resolved`: tag → number; `latest`,
 * when there, is the head a numeric top is measured to).
 */
export function planLogs(bounds: { from: LogsBound; to: LogsBound }, resolved: ReadonlyMap<string, number>, limits: GetLogsLimits): LogsPlan {
  const num = (b: LogsBound) => ('n' in b ? b.n : resolved.get(b.tag))
  const from = num(bounds.from)
  const asked = num(bounds.to)
  if (from === undefined || asked === undefined) return { serve: 'as-is', from }
  const to = measuredTop(bounds.to, asked, resolved.get('latest'))
  if (from > to) return { serve: 'as-is', from } // the node says what is wrong (or that nothing is there yet)
  const width = to - from + 1
  if (width > limits.maxRangeBlocks) return { serve: 'too-wide', from, to, suggestTo: from + limits.maxRangeBlocks - 1 }
  // A top past the head is asked as the head, even in one chunk: a verified read proves the blocks
  // up to a header it can trust, and a block past the head has none (the node's logs there would
  // be judged unprovable); what is mined meanwhile is what a call sent a moment earlier misses.
  if (width <= limits.chunkBlocks && asked === to) return { serve: 'as-is', from }
  const chunks: Array<readonly [number, number]> = []
  for (let a = from; a <= to; a += limits.chunkBlocks) chunks.push([a, Math.min(to, a + limits.chunkBlocks - 1)])
  return { serve: 'split', from, chunks }
}

/**
 * A range's top as the node reads it: a number past the head is read to the head (geth, anvil,
 * Hardhat and Ganache answer the logs up to their head), so a client's `toBlock: 0xffffff` on a
 * chain of 30 blocks is 30 blocks, not 16,777,216. Tags are the head or below already.
 */
function measuredTop(bound: LogsBound, top: number, head: number | undefined): number {
  return 'n' in bound && head !== undefined && top > head ? head : top
}

/**
 * How many node calls an eth_getLogs costs, estimated when it is admitted (before its tags are
 * asked of a node): the chunks its range splits into, with `latest`, `pending`, `safe` and
 * `finalized` read as the network's head (at most what the split will ask), and a numeric top
 * past the head read as the head. One for a range that
 * is served as it is, refused (wider than maxRangeBlocks: no chunk is asked), or not measurable
 * (a blockHash, a head not known yet, malformed bounds: the node judges it in one call).
 * It is what the call's units are multiplied by (docs/costs.md): a range of 100,000 blocks is 50
 * node calls at the defaults, and must not cost what one call over 40 blocks costs.
 */
export function chunkCount(filter: unknown, head: number | undefined, limits: Pick<GetLogsLimits, 'chunkBlocks' | 'maxRangeBlocks'>): number {
  const bounds = logsBounds(filter)
  if (bounds === undefined) return 1
  const num = (b: LogsBound) => ('n' in b ? b.n : head)
  const from = num(bounds.from)
  const asked = num(bounds.to)
  if (from === undefined || asked === undefined) return 1
  const to = measuredTop(bounds.to, asked, head)
  if (from > to) return 1
  const width = to - from + 1
  if (width > limits.maxRangeBlocks || width <= limits.chunkBlocks) return 1
  return Math.ceil(width / limits.chunkBlocks)
}

export const hex = (n: number): string => `0x${n.toString(16)}`

/** The message for a range wider than the maximum, in the phrasing log indexers already parse. */
export function tooWideMessage(plan: { from: number; to: number; suggestTo: number }, maxRangeBlocks: number): string {
  return (
    `eth_getLogs block range too wide: ${plan.to - plan.from + 1} blocks (${hex(plan.from)} to ${hex(plan.to)}), ` +
    `at most ${maxRangeBlocks} are served in one call. Try with this block range [${hex(plan.from)}, ${hex(plan.suggestTo)}].`
  )
}

/**
 * The message for a result over the maximum log count. `cutBlock` is the block of the first log
 * past the limit: the range up to the block before it holds at most `maxLogs` logs.
 */
export function tooManyMessage(from: number, cutBlock: number, maxLogs: number): string {
  if (cutBlock <= from) {
    return `eth_getLogs query returned more than ${maxLogs} logs, and block ${hex(cutBlock)} alone holds more than that: narrow the filter (address, topics) for that block.`
  }
  return `eth_getLogs query returned more than ${maxLogs} logs. Try with this block range [${hex(from)}, ${hex(cutBlock - 1)}].`
}

function boundOf(v: unknown): LogsBound | undefined {
  if (v === undefined || v === null) return { tag: 'latest' }
  if (typeof v !== 'string') return undefined
  if (v === 'earliest') return { n: 0 }
  if (v === 'latest' || v === 'pending' || v === 'safe' || v === 'finalized') return { tag: v }
  return /^0x[0-9a-fA-F]{1,13}$/.test(v) ? { n: parseInt(v, 16) } : undefined
}
