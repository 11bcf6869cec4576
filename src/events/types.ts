/**
 * The event catalog: the only source of truth for accounts, keys, plans, decisions and usage.
 *
 * Every event is `{ type, version, id, time, ...payload }`. `id` is deterministic (derived from
 * what the event says, never random) so that re-sending it after a crash or a NATS outage is
 * deduplicated by JetStream's `msgID` and by the embedded log. No event carries an API key in
 * clear text: keys appear as `keyId` (a public identifier), `keyHash` (SHA-256) and
 * `keyCipher` (AES-256-GCM under TOLLGATE_SECRET, so that the owner can see it again).
 *
 * The JSON Schemas in `schemas/events/` are generated from `schemas/events.ts` and must agree
 * with these types (test/events/schemas.test.ts checks every type round-trips and validates).
 */

export type NodeKind = 'full' | 'archive'

/** A (network, node kind) pair an account may use. */
export interface Entitlement {
  network: string
  kind: NodeKind
}

interface EventHead<T extends string> {
  type: T
  /** Schema version of this event type; bump on an incompatible change. */
  version: number
  /** Deterministic id (see eventId()). */
  id: string
  /** Milliseconds since the epoch when the fact happened. */
  time: number
}

export interface AccountCreated extends EventHead<'AccountCreated'> {
  accountId: string
  /** Lower-case 0x address of the wallet that owns the account. */
  wallet: string
}

export interface PlanActivated extends EventHead<'PlanActivated'> {
  accountId: string
  planId: string
  /** When the plan period starts and ends (ms since epoch); endsAt null: no end. */
  startsAt: number
  endsAt: number | null
}

export interface PlanEnded extends EventHead<'PlanEnded'> {
  accountId: string
  planId: string
  reason: 'expired' | 'cancelled' | 'replaced'
}

export interface NodesSelected extends EventHead<'NodesSelected'> {
  accountId: string
  nodes: Entitlement[]
}

export interface KeyIssued extends EventHead<'KeyIssued'> {
  accountId: string
  keyId: string
  /** hex SHA-256 of the key string. */
  keyHash: string
  /** base64url AES-256-GCM of the key under TOLLGATE_SECRET (iv|tag|ciphertext). */
  keyCipher: string
}

export interface KeyRevoked extends EventHead<'KeyRevoked'> {
  accountId: string
  keyId: string
  reason: 'regenerated' | 'revoked'
  /** From when the key no longer works (ms since epoch); a grace period puts it in the future. */
  effectiveAt: number
}

/** Rejections aggregated per key, network, node kind and interval (never one event per call). */
export interface RateLimited extends EventHead<'RateLimited'> {
  accountId: string
  keyId: string
  network: string
  kind: NodeKind
  /** Which gateway process made these decisions. */
  instance: string
  intervalStart: number
  intervalMs: number
  count: number
  reason: 'http-rps'
}

/**
 * A client IP kept exceeding rate limits and is throttled until `until`, for every key (the
 * throttle lifts by itself then). Projected, so that a restarted gateway, or another instance on
 * the same log, enforces it too.
 */
export interface IpThrottled extends EventHead<'IpThrottled'> {
  ip: string
  /** ms since epoch when the throttle lifts. */
  until: number
  reason: 'rate-limit-rejections'
  /** Rejected calls counted over `windowMs` that crossed the threshold. */
  rejections: number
  windowMs: number
  instance: string
}

/** Usage aggregated per key, network, node kind and interval, by the instance that served it. */
export interface UsageRecorded extends EventHead<'UsageRecorded'> {
  accountId: string
  keyId: string
  network: string
  kind: NodeKind
  /** Which gateway process served these calls (usage of several instances adds up). */
  instance: string
  intervalStart: number
  intervalMs: number
  /** Calls served (each call of a batch counts). */
  requests: number
  /** Of those, calls answered with a JSON-RPC error (the node's or ours). */
  errors: number
  bytesIn: number
  bytesOut: number
}

/** Why WebSocket traffic of a key was refused (see actors/key/ws-limits.ts). */
export type WsLimitReason = 'ws-connections' | 'ws-cooldown' | 'ws-messages-throttled' | 'ws-messages-dropped' | 'ws-penalty'

/** WebSocket refusals aggregated per key, network, reason and interval (never one event per message). */
export interface WsLimited extends EventHead<'WsLimited'> {
  accountId: string
  keyId: string
  network: string
  instance: string
  intervalStart: number
  intervalMs: number
  reason: WsLimitReason
  /** Connections refused, or calls refused (each call of a batch counts). */
  count: number
}

/** Too many new WebSocket connections in one second: new connections are blocked until `until`. */
export interface WsCooldownStarted extends EventHead<'WsCooldownStarted'> {
  accountId: string
  keyId: string
  network: string
  instance: string
  reason: 'ws-connection-rate'
  /** New connections are refused until then (ms since epoch), on every instance. */
  until: number
  /** Connections attempted within `windowMs`, the refused one included. */
  connections: number
  windowMs: number
}

/** Repeated malformed or unsupported WebSocket messages: messages are refused until `until`. */
export interface WsPenaltyImposed extends EventHead<'WsPenaltyImposed'> {
  accountId: string
  keyId: string
  network: string
  instance: string
  reason: 'ws-bad-messages'
  until: number
  /** Bad messages that imposed it, within `windowMs`. */
  badMessages: number
  windowMs: number
}

/** Subscription notifications sent to a key's WebSocket clients, per network, node kind and interval. */
export interface NotificationsRecorded extends EventHead<'NotificationsRecorded'> {
  accountId: string
  keyId: string
  network: string
  kind: NodeKind
  instance: string
  intervalStart: number
  intervalMs: number
  notifications: number
  bytesOut: number
}

export type TollgateEvent =
  | AccountCreated
  | PlanActivated
  | PlanEnded
  | NodesSelected
  | KeyIssued
  | KeyRevoked
  | RateLimited
  | IpThrottled
  | UsageRecorded
  | WsLimited
  | WsCooldownStarted
  | WsPenaltyImposed
  | NotificationsRecorded

export type EventType = TollgateEvent['type']

/** An event as read back from a log, with its position. */
export interface StoredEvent {
  /** Position in the log, from 1, gap-free per log (JetStream stream sequence or embedded counter). */
  seq: number
  event: TollgateEvent
}

/** Current schema version of each type. */
export const EVENT_VERSIONS: { readonly [T in EventType]: number } = Object.freeze({
  AccountCreated: 1,
  PlanActivated: 1,
  PlanEnded: 1,
  NodesSelected: 1,
  KeyIssued: 1,
  KeyRevoked: 1,
  RateLimited: 1,
  IpThrottled: 1,
  UsageRecorded: 1,
  WsLimited: 1,
  WsCooldownStarted: 1,
  WsPenaltyImposed: 1,
  NotificationsRecorded: 1,
})

export const EVENT_TYPES = Object.keys(EVENT_VERSIONS) as EventType[]

/**
 * NATS subject of an event: `tollgate.<category>.<type>` where category is
 * `accounts` (accounts, plans, entitlements, payments, keys), `decisions` (rate limits,
 * penalties, throttles, cooldowns) or `usage`.
 */
export function subjectOf(event: TollgateEvent, prefix = 'tollgate'): string {
  return `${prefix}.${categoryOf(event.type)}.${event.type}`
}

export function categoryOf(type: EventType): 'accounts' | 'decisions' | 'usage' {
  switch (type) {
    case 'AccountCreated':
    case 'PlanActivated':
    case 'PlanEnded':
    case 'NodesSelected':
    case 'KeyIssued':
    case 'KeyRevoked':
      return 'accounts'
    case 'RateLimited':
    case 'WsLimited':
    case 'WsCooldownStarted':
    case 'WsPenaltyImposed':
    case 'IpThrottled':
      return 'decisions'
    case 'UsageRecorded':
    case 'NotificationsRecorded':
      return 'usage'
  }
}

/** Events as callers build them: everything but the head, which makeEvent() fills in. */
export type EventInput<E extends TollgateEvent = TollgateEvent> = E extends TollgateEvent
  ? Omit<E, 'version' | 'id' | 'time'>
  : never
