import { systemClock, type Clock } from '../../actors/runtime/clock.js'
import type { Answer } from './answer.js'

/**
 * Methods checked by consensus when a network asks for it and names none: state reads, blocks,
 * transactions, receipts and logs, the answers a lying or broken node could change unseen. Not
 * eth_blockNumber, eth_gasPrice & co.: nodes differ on them by a block or a price without any
 * being wrong (the head never going back is kept apart, see UpstreamPool).
 */
export const DEFAULT_CONSENSUS_METHODS: readonly string[] = [
  'eth_getBalance',
  'eth_getCode',
  'eth_getStorageAt',
  'eth_getTransactionCount',
  'eth_getProof',
  'eth_call',
  'eth_getBlockByNumber',
  'eth_getBlockByHash',
  'eth_getBlockReceipts',
  'eth_getTransactionByHash',
  'eth_getTransactionReceipt',
  'eth_getLogs',
]

/** A network's consensus settings (networks.<slug>.consensus, defaults filled in). */
export interface ConsensusPolicy {
  /** Nodes asked each call. */
  readonly participants: number
  /** Nodes that must give the same answer for the client to get it. */
  readonly agreement: number
  readonly methods: ReadonlySet<string>
  /** Disputes within this window that make a node sit out. */
  readonly disputeWindowMs: number
  readonly disputeThreshold: number
  /** How long a node past the threshold takes no call. */
  readonly sitOutMs: number
}

/** Consensus defaults (docs/upstream-selection.md). */
export const CONSENSUS_DEFAULTS = {
  disputeWindowMs: 600_000,
  disputeThreshold: 5,
  sitOutMs: 1_800_000,
} as const

/** Consensus figures of a network, for /metrics. */
export interface ConsensusCounters {
  /** Calls answered by an agreement. */
  agreed: number
  /** Calls that reached no agreement (the client got NODES_DISAGREE). */
  disagreed: number
  /** Calls sent to nodes for consensus (each participant, replacements included). */
  fanOut: number
}

/**
 * What an answer says, as one string, so that two nodes' answers compare as JSON values: the
 * `result` (or, for an error, its `code` and `data`: nodes word the same error differently) with
 * the keys of every object in sorted order. Whitespace, key order and the id do not count.
 * @example
 * answerValue(a) === answerValue(b) // {"result":{"a":1,"b":2}} and { "id":7, "result": {"b":2,"a":1} } agree
 */
export function answerValue(answer: Answer): string {
  let parsed: { result?: unknown; error?: { code?: unknown; data?: unknown } }
  try {
    parsed = JSON.parse(answer.text) as typeof parsed
  } catch {
    // Unreadable answers never agree with anything (each is its own value).
    return `unreadable:${answer.text}`
  }
  if (parsed.error !== undefined) return `error:${canonical({ code: parsed.error?.code, data: parsed.error?.data })}`
  return `result:${canonical(parsed.result)}`
}

/** JSON text with object keys sorted at every level. */
export function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  const keys = Object.keys(value).sort()
  const parts: string[] = []
  for (const k of keys) {
    const v = (value as Record<string, unknown>)[k]
    if (v !== undefined) parts.push(`${JSON.stringify(k)}:${canonical(v)}`)
  }
  return `{${parts.join(',')}}`
}

/**
 * A node's disputes: the times it answered against an agreement, within the window. Past the
 * threshold the node sits out (the caller takes it out for sitOutMs), and its count starts over.
 * @example
 * const d = new Disputes({ disputeWindowMs: 60_000, disputeThreshold: 2 })
 * d.record() // false
 * d.record() // true: sit out
 */
export class Disputes {
  readonly #windowMs: number
  readonly #threshold: number
  readonly #clock: Clock
  /** Times of the disputes within the window, oldest first (at most threshold of them). */
  #times: number[] = []
  /** Every dispute of the node, and the sit-outs they caused (the pool counts those), for /metrics. */
  total = 0
  sitOuts = 0

  constructor(opts: { disputeWindowMs: number; disputeThreshold: number; clock?: Clock }) {
    this.#windowMs = opts.disputeWindowMs
    this.#threshold = opts.disputeThreshold
    this.#clock = opts.clock ?? systemClock
  }

  /** Count one dispute; true when the node must sit out now. */
  record(): boolean {
    const now = this.#clock.now()
    this.total++
    this.#times = this.#times.filter((t) => now - t < this.#windowMs)
    this.#times.push(now)
    if (this.#times.length < this.#threshold) return false
    this.#times = []
    return true
  }
}
