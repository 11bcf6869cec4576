/**
 * The decider of one API key: admission against the key's per-second limits, as a pure
 * function of (state, command, time). The host (src/) applies the decision: replies 429 or
 * 403, counts rejections into `RateLimited` events, forwards admitted calls.
 */
import { fullBucket, refill, take, type TokenBucket } from '../rate/token-bucket.js'
import {
  DEFAULT_WS_KEY_LIMITS,
  consumedElsewhereWs,
  decideWs,
  initialWsState,
  type WsCommand,
  type WsDecision,
  type WsKeyLimits,
  type WsKeyState,
} from './ws-limits.js'

/** The node kind a call goes to (the same values as NodeKind in src/events/types.ts). */
export type CallKind = 'full' | 'archive'

/**
 * Requests per second by node kind: null = unlimited, 0 = no access to that kind. Compute units
 * per second by node kind beside them (`fullUnits`, `archiveUnits`): null or absent = no units limit.
 */
export interface KeyLimits {
  full: number | null
  archive: number | null
  fullUnits?: number | null
  archiveUnits?: number | null
}

export interface RateState {
  keyId: string
  accountId: string
  limits: KeyLimits
  /** Calls by node kind, and compute units by node kind (used only when the plan limits units). */
  buckets: { full: TokenBucket; archive: TokenBucket; fullUnits: TokenBucket; archiveUnits: TokenBucket }
  /** The WebSocket limits: connections, messages, cooldown and penalty (see ws-limits.ts). */
  ws: WsKeyState
}

/**
 * Charge `calls` calls to nodes of `kind`, costing `units` compute units. `queueMs`: how long a
 * call may wait for tokens instead of being rejected at once (the spec's "excess requests may
 * first be queued briefly").
 */
export type ChargeCommand = { type: 'Charge'; kind: CallKind; calls: number; queueMs?: number; units?: number }
/**
 * Calls and connections other instances of the fleet admitted for this key: taken from the
 * buckets without a decision (in debt if need be), so that one budget holds across instances.
 */
export type ConsumedElsewhereCommand = {
  type: 'ConsumedElsewhere'
  full: number
  archive: number
  messages: number
  connects: number
  fullUnits?: number
  archiveUnits?: number
  /** When the newest of `connects` was made (the other instance's clock); absent: now. */
  connectedAt?: number
}
export type KeyCommand = ChargeCommand | WsCommand

export type ChargeDecision =
  /** `delayMs` > 0: admitted from the queue; the host forwards the calls after that long. */
  | { type: 'Admitted'; remaining: number; limit: number | null; resetMs: number; delayMs: number }
  /** `http-rps`: over the calls per second (`limit`); `http-units`: over the compute units per second (`limit`). */
  | { type: 'Rejected'; reason: 'http-rps' | 'http-units'; retryAfterMs: number; limit: number; remaining: 0; resetMs: number }
  /** The plan gives this key no access to this node kind (limit 0): a 403, not a 429. */
  | { type: 'Rejected'; reason: 'no-access'; kind: CallKind; limit: 0; remaining: 0 }

export type KeyDecision = ChargeDecision | WsDecision

export interface InitialRateStateInput {
  keyId: string
  accountId: string
  limits: KeyLimits
  /** WebSocket limits; default: the spec's (DEFAULT_WS_KEY_LIMITS). */
  ws?: WsKeyLimits
}

/**
 * Burst = one second of the limit: a client may send a second's worth of calls at once, and
 * no more. Unlimited and no-access keys hold no meaningful tokens (0).
 */
function burstOf(limit: number | null): number {
  return limit === null ? 0 : limit
}

/** The state of a freshly activated key: its buckets start full. */
export function initialRateState(input: InitialRateStateInput, now: number): RateState {
  return {
    keyId: input.keyId,
    accountId: input.accountId,
    limits: {
      full: input.limits.full,
      archive: input.limits.archive,
      fullUnits: input.limits.fullUnits ?? null,
      archiveUnits: input.limits.archiveUnits ?? null,
    },
    buckets: {
      full: fullBucket(burstOf(input.limits.full), now),
      archive: fullBucket(burstOf(input.limits.archive), now),
      fullUnits: fullBucket(burstOf(input.limits.fullUnits ?? null), now),
      archiveUnits: fullBucket(burstOf(input.limits.archiveUnits ?? null), now),
    },
    ws: initialWsState(input.ws ?? DEFAULT_WS_KEY_LIMITS, now),
  }
}

/**
 * Decide a command. Pure: returns a new state, never mutates `state`.
 *
 * Charge costs `calls` tokens (a batch of N calls costs N). A batch larger than the burst is
 * admitted only when the bucket is full, and leaves the bucket in debt (see `take` in
 * actors/rate/token-bucket.ts): refusing it until it fits would refuse it forever, while the
 * debt makes the key wait long enough afterwards that the average rate still holds.
 *
 * @example
 * const { decision } = decide(state, { type: 'Charge', kind: 'full', calls: 1 }, clock.now())
 */
export function decide(state: RateState, command: ChargeCommand, now: number): { state: RateState; decision: ChargeDecision }
export function decide(state: RateState, command: WsCommand, now: number): { state: RateState; decision: WsDecision }
export function decide(state: RateState, command: KeyCommand, now: number): { state: RateState; decision: KeyDecision }
export function decide(state: RateState, command: KeyCommand, now: number): { state: RateState; decision: KeyDecision } {
  switch (command.type) {
    case 'Charge':
      return charge(state, command, now)
    case 'WsConnect':
    case 'WsDisconnect':
    case 'WsMessage':
    case 'WsBadMessages':
    case 'WsBlocksRestored': {
      const { state: ws, decision } = decideWs(state.ws, command, now)
      return { state: withParts(state, state.buckets, ws), decision }
    }
    default: {
      const unknown: never = command
      throw new TypeError(`unknown key command ${JSON.stringify(unknown)}`)
    }
  }
}

/**
 * Apply what other instances admitted (see ConsumedElsewhereCommand). Pure, like decide.
 * @example
 * const next = consumedElsewhere(state, { type: 'ConsumedElsewhere', full: 12, archive: 0, messages: 0, connects: 0 }, now)
 */
export function consumedElsewhere(state: RateState, command: ConsumedElsewhereCommand, now: number): RateState {
  const debit = (bucket: TokenBucket, limit: number | null, cost: number): TokenBucket => debited(bucket, limit, cost, now)
  return {
    ...state,
    buckets: {
      full: debit(state.buckets.full, state.limits.full, command.full),
      archive: debit(state.buckets.archive, state.limits.archive, command.archive),
      fullUnits: debit(state.buckets.fullUnits, state.limits.fullUnits ?? null, command.fullUnits ?? 0),
      archiveUnits: debit(state.buckets.archiveUnits, state.limits.archiveUnits ?? null, command.archiveUnits ?? 0),
    },
    ws: consumedElsewhereWs(state.ws, command.messages, command.connects, now, command.connectedAt ?? now),
  }
}

/**
 * Compute units of `kind` the plan has left at `now` (refilled, at most a second's worth; below 0
 * while in debt); Infinity when the plan sets no units limit for that kind. Read for every copy of
 * every subscription notification, so it computes the level without making a bucket.
 * @example
 * if (unitsLeft(state, 'full', now) < units) refuse()
 */
export function unitsLeft(state: RateState, kind: CallKind, now: number): number {
  const limit = kind === 'full' ? state.limits.fullUnits : state.limits.archiveUnits
  if (limit == null) return Number.POSITIVE_INFINITY
  const bucket = kind === 'full' ? state.buckets.fullUnits : state.buckets.archiveUnits
  return Math.min(burstOf(limit), bucket.tokens + (Math.max(0, now - bucket.at) * limit) / 1000)
}

/**
 * Take `units` of `kind` already spent from the plan's units per second, in debt if need be:
 * notifications delivered (their units are known only once they went; refusing them after the
 * fact is not possible). No decision: the calls that follow wait until the debt is paid back.
 * @example
 * const next = debitUnits(state, 'full', 240, now)
 */
export function debitUnits(state: RateState, kind: CallKind, units: number, now: number): RateState {
  const unitKind = kind === 'full' ? 'fullUnits' : 'archiveUnits'
  const limit = state.limits[unitKind] ?? null
  if (units <= 0 || limit === null) return state
  return withParts(state, withBucket(state.buckets, unitKind, debited(state.buckets[unitKind], limit, units, now)), state.ws)
}

/** `bucket` refilled to `now` with `cost` taken, in debt if need be; unchanged without a limit (null, or 0: no access). */
function debited(bucket: TokenBucket, limit: number | null, cost: number, now: number): TokenBucket {
  if (cost <= 0 || limit === null || limit === 0) return bucket
  const current = refill(bucket, limit, burstOf(limit), now)
  return { tokens: current.tokens - cost, at: current.at }
}

function charge(state: RateState, command: ChargeCommand, now: number): { state: RateState; decision: ChargeDecision } {
  const { kind, calls } = command
  const limit = state.limits[kind]
  if (limit === 0) {
    return { state, decision: { type: 'Rejected', reason: 'no-access', kind, limit: 0, remaining: 0 } }
  }
  const unitLimit = kind === 'full' ? state.limits.fullUnits : state.limits.archiveUnits
  // != null: absent or null, no units limit (the path of every plan that sets none stays as it was).
  if (unitLimit != null && (command.units ?? 0) > 0) return chargeWithUnits(state, command, limit, unitLimit, now)
  if (limit === null) {
    return {
      state,
      decision: { type: 'Admitted', remaining: Number.POSITIVE_INFINITY, limit: null, resetMs: 0, delayMs: 0 },
    }
  }
  const result = take(state.buckets[kind], calls, limit, burstOf(limit), now)
  const next = withParts(state, withBucket(state.buckets, kind, result.bucket), state.ws)
  if (result.ok) {
    return { state: next, decision: { type: 'Admitted', remaining: result.remaining, limit, resetMs: result.resetMs, delayMs: 0 } }
  }
  // The queue: take the tokens now, in debt, and let the calls wait until the debt is refilled.
  // Bounded in time by queueMs, and so in length too: at most limit × queueMs / 1000 calls of
  // debt can be waiting at once; what would wait longer is rejected.
  const queueMs = command.queueMs ?? 0
  if (queueMs > 0 && result.retryAfterMs <= queueMs) {
    const queued = { tokens: result.bucket.tokens - calls, at: result.bucket.at }
    return {
      state: withParts(state, withBucket(state.buckets, kind, queued), state.ws),
      decision: { type: 'Admitted', remaining: 0, limit, resetMs: result.resetMs, delayMs: result.retryAfterMs },
    }
  }
  return {
    state: next,
    decision: {
      type: 'Rejected',
      reason: 'http-rps',
      retryAfterMs: result.retryAfterMs,
      limit,
      remaining: 0,
      resetMs: result.resetMs,
    },
  }
}

/**
 * Admission when the plan limits compute units: the calls must fit the calls per second (unless
 * unlimited) and their units the units per second, both or neither taken, so that a call refused
 * by one limit does not spend the other. The queue waits for the later of the two; a rejection
 * names the units limit when the units are short (a burst of traces), else the calls limit.
 */
function chargeWithUnits(
  state: RateState,
  command: ChargeCommand,
  limit: number | null,
  unitLimit: number,
  now: number,
): { state: RateState; decision: ChargeDecision } {
  const { kind, calls } = command
  const units = command.units ?? 0
  const unitKind = kind === 'full' ? 'fullUnits' : 'archiveUnits'
  // No calls (a WebSocket message's units, its calls charged as messages): the calls bucket is left alone.
  const c = limit === null || calls === 0 ? undefined : take(state.buckets[kind], calls, limit, burstOf(limit), now)
  const u = take(state.buckets[unitKind], units, unitLimit, burstOf(unitLimit), now)
  const callsOk = c === undefined || c.ok
  const waitMs = Math.max(callsOk ? 0 : c.retryAfterMs, u.ok ? 0 : u.retryAfterMs)
  const queueMs = command.queueMs ?? 0
  if ((callsOk && u.ok) || (queueMs > 0 && waitMs <= queueMs)) {
    // Queued: the tokens are taken now, in debt, as charge's queue does.
    const callsBucket = c === undefined ? state.buckets[kind] : c.ok ? c.bucket : { tokens: c.bucket.tokens - calls, at: c.bucket.at }
    const unitsBucket = u.ok ? u.bucket : { tokens: u.bucket.tokens - units, at: u.bucket.at }
    const buckets = withBucket(withBucket(state.buckets, kind, callsBucket), unitKind, unitsBucket)
    return {
      state: withParts(state, buckets, state.ws),
      decision: {
        type: 'Admitted',
        remaining: c === undefined ? Number.POSITIVE_INFINITY : c.remaining,
        limit,
        resetMs: c?.resetMs ?? 0,
        delayMs: waitMs,
      },
    }
  }
  const byUnits = !u.ok
  return {
    state,
    decision: {
      type: 'Rejected',
      reason: byUnits ? 'http-units' : 'http-rps',
      retryAfterMs: waitMs,
      limit: byUnits ? unitLimit : (limit as number),
      remaining: 0,
      resetMs: byUnits ? u.resetMs : c!.resetMs,
    },
  }
}

/**
 * The state with other buckets or WebSocket state, written out field by field: the object
 * spreads this replaced took V8's slow clone path (CloneObjectIC_Slow) on every admission and
 * every WebSocket message, about 3% of a message's CPU (bench/README.md, session 7). A literal
 * of one shape does not, and its type still says when a field is left out.
 */
function withParts(state: RateState, buckets: RateState['buckets'], ws: WsKeyState): RateState {
  return { keyId: state.keyId, accountId: state.accountId, limits: state.limits, buckets, ws }
}

function withBucket(buckets: RateState['buckets'], kind: keyof RateState['buckets'], bucket: TokenBucket): RateState['buckets'] {
  const { full, archive, fullUnits, archiveUnits } = buckets
  switch (kind) {
    case 'full':
      return { full: bucket, archive, fullUnits, archiveUnits }
    case 'archive':
      return { full, archive: bucket, fullUnits, archiveUnits }
    case 'fullUnits':
      return { full, archive, fullUnits: bucket, archiveUnits }
    case 'archiveUnits':
      return { full, archive, fullUnits, archiveUnits: bucket }
  }
}

/**
 * The state with new limits (the projection changed the key's plan). Bucket levels are kept,
 * so that a plan change cannot be used to refill a drained bucket, and capped at the new
 * burst. A kind that had no meaningful bucket (unlimited or no access) and now has a limit
 * starts full, as a fresh activation would.
 */
export function withLimits(state: RateState, limits: KeyLimits, now: number): RateState {
  return {
    ...state,
    limits: { full: limits.full, archive: limits.archive, fullUnits: limits.fullUnits ?? null, archiveUnits: limits.archiveUnits ?? null },
    buckets: {
      full: rebucket(state.buckets.full, state.limits.full, limits.full, now),
      archive: rebucket(state.buckets.archive, state.limits.archive, limits.archive, now),
      fullUnits: rebucket(state.buckets.fullUnits, state.limits.fullUnits ?? null, limits.fullUnits ?? null, now),
      archiveUnits: rebucket(state.buckets.archiveUnits, state.limits.archiveUnits ?? null, limits.archiveUnits ?? null, now),
    },
  }
}

function rebucket(bucket: TokenBucket, oldLimit: number | null, newLimit: number | null, now: number): TokenBucket {
  if (newLimit === null || newLimit === 0) return fullBucket(0, now)
  if (oldLimit === null || oldLimit === 0) return fullBucket(burstOf(newLimit), now)
  // Bring the level up to now under the old rate, then cap it at the new burst.
  const current = refill(bucket, oldLimit, burstOf(oldLimit), now)
  return { tokens: Math.min(current.tokens, burstOf(newLimit)), at: current.at }
}
