/**
 * The WebSocket limits of one API key (the spec's Limits table), as pure functions of
 * (state, command, time): concurrent connections, new connections per second with a cooldown,
 * messages per second across the key's connections, and a penalty for repeated malformed or
 * unsupported messages. The host (src/ws/) applies the decisions: refuses the upgrade, answers
 * -32005, drops, publishes the cooldown and penalty as events.
 */
import { defaultsOf } from '../../schemas/json-schema.js'
import { wsKeyLimitsSchema, type WsKeyLimitsConfig } from '../../schemas/ws-key-limits.js'
import { fullBucket, take, type TokenBucket } from '../rate/token-bucket.js'

/**
 * The limits of one key: the configuration's (schemas/ws-key-limits.ts names and describes each),
 * except that messagesPerSecond is null for a plan without a rate limit (unlimited).
 */
export type WsKeyLimits = Omit<WsKeyLimitsConfig, 'messagesPerSecond'> & { messagesPerSecond: number | null }

/** The spec's values: the schema's defaults (see docs/websocket.md, "WebSocket limits"). */
export const DEFAULT_WS_KEY_LIMITS: Readonly<WsKeyLimits> = Object.freeze(defaultsOf(wsKeyLimitsSchema) as WsKeyLimits)

/** The per-key limits among the configuration's `ws` section (which also holds limits of one connection). */
export function wsKeyLimitsOf(ws: WsKeyLimits): WsKeyLimits {
  return Object.fromEntries(Object.keys(wsKeyLimitsSchema.properties).map((name) => [name, ws[name as keyof WsKeyLimits]])) as WsKeyLimits
}

export interface WsKeyState {
  limits: WsKeyLimits
  /** Connections open now (on this instance). */
  open: number
  /** When the last accepted connections opened, oldest first, at most newConnectionsPerSecond of them. */
  recentConnects: readonly number[]
  /** New connections are refused until then (ms since epoch); 0: no cooldown. */
  cooldownUntil: number
  /** Messages are refused until then; 0: no penalty. */
  penaltyUntil: number
  /** Messages admitted: messagesPerSecond × (1 + tolerance) per second, as much as a burst. */
  messages: TokenBucket
  /**
   * Throttle answers: a client flooding past its limit gets at most messagesPerSecond error
   * answers per second; what comes beyond is dropped unanswered, so that a flood cannot make the
   * gateway write as much as it reads.
   */
  answers: TokenBucket
  /** Malformed or unsupported messages still tolerated (refills over badMessagesWindowMs). */
  bad: TokenBucket
}

export type WsCommand =
  /**
   * A connection asks to open. `allowed`: how many of the key's connections this instance may hold
   * now, when it shares the key with other instances of a fleet (see actors/fleet/shares.ts);
   * absent: the key's whole maxConnectionsPerKey.
   */
  | { type: 'WsConnect'; allowed?: number }
  | { type: 'WsDisconnect' }
  /** A message arrived holding `calls` calls (a batch counts each; anything else is 1). */
  | { type: 'WsMessage'; calls: number }
  /** `count` calls of an answered message were malformed or unsupported. */
  | { type: 'WsBadMessages'; count: number }
  /** A cooldown or penalty decided elsewhere (another instance, or before a restart) was projected. */
  | { type: 'WsBlocksRestored'; cooldownUntil: number; penaltyUntil: number }

export type WsDecision =
  | { type: 'WsAccepted'; open: number }
  /** Refused: `ws-connections` (too many open), `ws-cooldown` (blocked), `ws-connection-rate` (this one started the cooldown). */
  | { type: 'WsRefused'; reason: 'ws-connections'; limit: number; retryAfterMs: 0 }
  | { type: 'WsRefused'; reason: 'ws-cooldown'; retryAfterMs: number; until: number }
  | { type: 'WsRefused'; reason: 'ws-connection-rate'; retryAfterMs: number; until: number; connections: number; windowMs: number }
  | { type: 'WsClosed'; open: number }
  | { type: 'WsMessageAdmitted' }
  | { type: 'WsMessageRejected'; reason: 'ws-messages-throttled'; retryAfterMs: number; limit: number }
  | { type: 'WsMessageRejected'; reason: 'ws-messages-dropped' }
  | { type: 'WsMessageRejected'; reason: 'ws-penalty'; retryAfterMs: number; until: number }
  | { type: 'WsBadNoted'; remaining: number }
  | { type: 'WsPenaltyStarted'; until: number; badMessages: number; windowMs: number }
  | { type: 'WsBlocksApplied'; cooldownUntil: number; penaltyUntil: number }

/** One second of traffic at the tolerated rate: the burst a key may send at once. */
function messageRate(limits: WsKeyLimits): number | null {
  return limits.messagesPerSecond === null ? null : limits.messagesPerSecond * (1 + limits.tolerance)
}

function badRate(limits: WsKeyLimits): number {
  return (limits.badMessages * 1000) / limits.badMessagesWindowMs
}

/** A key's WebSocket state on activation: nothing open, buckets full, no cooldown or penalty. */
export function initialWsState(limits: WsKeyLimits, now: number): WsKeyState {
  const rate = messageRate(limits)
  return {
    limits: { ...limits },
    open: 0,
    recentConnects: [],
    cooldownUntil: 0,
    penaltyUntil: 0,
    messages: fullBucket(rate ?? 0, now),
    answers: fullBucket(limits.messagesPerSecond ?? 0, now),
    bad: fullBucket(limits.badMessages, now),
  }
}

/**
 * Decide a WebSocket command. Pure: returns a new state, never mutates `state`.
 * @example
 * const { state: next, decision } = decideWs(state, { type: 'WsConnect' }, clock.now())
 */
export function decideWs(state: WsKeyState, command: WsCommand, now: number): { state: WsKeyState; decision: WsDecision } {
  switch (command.type) {
    case 'WsConnect':
      return connect(state, now, command.allowed)
    case 'WsDisconnect': {
      const open = Math.max(0, state.open - 1)
      return { state: { ...state, open }, decision: { type: 'WsClosed', open } }
    }
    case 'WsMessage':
      return message(state, command.calls, now)
    case 'WsBadMessages':
      return badMessages(state, command.count, now)
    case 'WsBlocksRestored': {
      // The later end wins: a projection never shortens a block this instance decided.
      const cooldownUntil = Math.max(state.cooldownUntil, command.cooldownUntil)
      const penaltyUntil = Math.max(state.penaltyUntil, command.penaltyUntil)
      return { state: { ...state, cooldownUntil, penaltyUntil }, decision: { type: 'WsBlocksApplied', cooldownUntil, penaltyUntil } }
    }
    default: {
      const unknown: never = command
      throw new TypeError(`unknown WebSocket command ${JSON.stringify(unknown)}`)
    }
  }
}

function connect(state: WsKeyState, now: number, allowed = Number.POSITIVE_INFINITY): { state: WsKeyState; decision: WsDecision } {
  const { limits } = state
  if (now < state.cooldownUntil) {
    return { state, decision: { type: 'WsRefused', reason: 'ws-cooldown', retryAfterMs: state.cooldownUntil - now, until: state.cooldownUntil } }
  }
  if (state.open >= Math.min(limits.maxConnectionsPerKey, allowed)) {
    return { state, decision: { type: 'WsRefused', reason: 'ws-connections', limit: limits.maxConnectionsPerKey, retryAfterMs: 0 } }
  }
  // A sliding one-second window over accepted connections: the oldest of the last N tells
  // whether N more opened within the last second. Refused connections are not kept: a client
  // hammering a refusal must not extend its own window forever (the cooldown does that job).
  const recent = state.recentConnects.filter((t) => now - t < 1000 && t <= now)
  if (recent.length >= limits.newConnectionsPerSecond) {
    const until = now + limits.cooldownMs
    return {
      state: { ...state, recentConnects: [], cooldownUntil: until },
      decision: { type: 'WsRefused', reason: 'ws-connection-rate', retryAfterMs: limits.cooldownMs, until, connections: recent.length + 1, windowMs: 1000 },
    }
  }
  const open = state.open + 1
  return { state: { ...state, open, recentConnects: [...recent, now] }, decision: { type: 'WsAccepted', open } }
}

/**
 * The state with other message and answer buckets, written out field by field: on every message,
 * an object spread took V8's slow clone path (see withParts in decide.ts).
 */
function withBuckets(state: WsKeyState, messages: TokenBucket, answers: TokenBucket): WsKeyState {
  const { limits, open, recentConnects, cooldownUntil, penaltyUntil, bad } = state
  return { limits, open, recentConnects, cooldownUntil, penaltyUntil, messages, answers, bad }
}

function message(state: WsKeyState, calls: number, now: number): { state: WsKeyState; decision: WsDecision } {
  const { limits } = state
  const rate = messageRate(limits)
  if (rate !== null) {
    const taken = take(state.messages, calls, rate, rate, now)
    if (!taken.ok) {
      const limit = limits.messagesPerSecond!
      const answer = take(state.answers, 1, limit, limit, now)
      if (!answer.ok) {
        // Dropped: what the message budget held is spent too, so that the next messages are
        // dropped unread (dropsUnread) until a token comes back. Without it, a client flooding
        // batches larger than what is left would have each one read whole and then dropped.
        const spent = { tokens: Math.min(taken.bucket.tokens, 0), at: taken.bucket.at }
        return { state: withBuckets(state, spent, answer.bucket), decision: { type: 'WsMessageRejected', reason: 'ws-messages-dropped' } }
      }
      const next = withBuckets(state, taken.bucket, answer.bucket)
      return { state: next, decision: { type: 'WsMessageRejected', reason: 'ws-messages-throttled', retryAfterMs: taken.retryAfterMs, limit } }
    }
    state = withBuckets(state, taken.bucket, state.answers)
  }
  if (now < state.penaltyUntil) {
    return { state, decision: { type: 'WsMessageRejected', reason: 'ws-penalty', retryAfterMs: state.penaltyUntil - now, until: state.penaltyUntil } }
  }
  return { state, decision: { type: 'WsMessageAdmitted' } }
}

/**
 * Whether the next message is dropped whatever it holds: no call left in the message budget and no
 * throttle answer left. The host asks before reading the message, so that a flood past the limit
 * is dropped without being parsed (a 1 MiB batch costs milliseconds to parse; dropping it, nothing).
 * It only reads the state: a message dropped so is the same decision `WsMessage` would take for it
 * (a drop changes no bucket but spends the message budget, which is empty here already).
 */
export function dropsUnread(state: WsKeyState, now: number): boolean {
  const rate = messageRate(state.limits)
  if (rate === null) return false
  return tokensAt(state.messages, rate, now) < 1 - EPSILON && tokensAt(state.answers, state.limits.messagesPerSecond!, now) < 1 - EPSILON
}

/** Refill arithmetic as in `take`, without a new bucket: tokens at `now`, at most one second's worth. */
function tokensAt(bucket: TokenBucket, ratePerSec: number, now: number): number {
  return Math.min(ratePerSec, bucket.tokens + (Math.max(0, now - bucket.at) * ratePerSec) / 1000)
}

/** As in token-bucket.ts: a refill landing a hair below a whole token counts as the token. */
const EPSILON = 1e-9

function badMessages(state: WsKeyState, count: number, now: number): { state: WsKeyState; decision: WsDecision } {
  const { limits } = state
  const taken = take(state.bad, count, badRate(limits), limits.badMessages, now)
  if (taken.ok) return { state: { ...state, bad: taken.bucket }, decision: { type: 'WsBadNoted', remaining: taken.remaining } }
  if (now < state.penaltyUntil) {
    // Already serving a penalty: it is not extended (messages are refused unread meanwhile).
    return { state: { ...state, bad: taken.bucket }, decision: { type: 'WsBadNoted', remaining: 0 } }
  }
  const until = now + limits.penaltyMs
  return {
    // The tolerance starts afresh after the penalty: the next one needs as many bad messages.
    state: { ...state, penaltyUntil: until, bad: fullBucket(limits.badMessages, until) },
    decision: { type: 'WsPenaltyStarted', until, badMessages: limits.badMessages + 1, windowMs: limits.badMessagesWindowMs },
  }
}

/**
 * What other instances of the fleet admitted for the same key (see actors/fleet/): their messages
 * come out of the shared message budget and their new connections count in the one-second window,
 * without a decision. The budget may go into debt: this instance then waits until it is paid back,
 * so the key's rate holds across the fleet on average, whatever the instance each call reached.
 */
export function consumedElsewhereWs(state: WsKeyState, messages: number, connects: number, now: number, connectedAt = now): WsKeyState {
  const rate = messageRate(state.limits)
  let next = state
  if (messages > 0 && rate !== null) next = { ...next, messages: debit(next.messages, messages, rate, now) }
  if (connects > 0) {
    // Counted from the newest of them as made there: a message that comes late (the sync
    // interval, a slow link) must not start a new second of them here. Never later than now.
    const at = Math.min(now, connectedAt)
    const recent = next.recentConnects.filter((t) => now - t < 1000 && t <= now)
    const added = now - at < 1000 ? Array.from({ length: Math.min(connects, next.limits.newConnectionsPerSecond) }, () => at) : []
    next = { ...next, recentConnects: [...recent, ...added].slice(-next.limits.newConnectionsPerSecond) }
  }
  return next
}

/** The bucket refilled to `now`, less `cost` tokens, debt allowed. */
function debit(bucket: TokenBucket, cost: number, rate: number, now: number): TokenBucket {
  const current = take(bucket, 0, rate, rate, now).bucket
  return { tokens: current.tokens - cost, at: current.at }
}

/**
 * The state with new limits (the plan changed): bucket levels kept and capped, as for HTTP.
 */
export function withWsLimits(state: WsKeyState, limits: WsKeyLimits, now: number): WsKeyState {
  const fresh = initialWsState(limits, now)
  const cap = (b: TokenBucket, max: TokenBucket): TokenBucket => ({ tokens: Math.min(b.tokens, max.tokens), at: b.at })
  const wasUnlimited = state.limits.messagesPerSecond === null
  return {
    ...state,
    limits: { ...limits },
    messages: wasUnlimited ? fresh.messages : cap(state.messages, fresh.messages),
    answers: wasUnlimited ? fresh.answers : cap(state.answers, fresh.answers),
    bad: cap(state.bad, fresh.bad),
  }
}
