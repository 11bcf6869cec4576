import type { Static } from '@sinclair/typebox'
import { eventSchemas, type entitlementSchema, type tokenTransferSchema } from '../../schemas/events.js'
import { partitionOf, partitionPrefix } from './partitions.js'

/**
 * The event catalog: the only source of truth for accounts, keys, plans, decisions and usage.
 * The types here are derived from schemas/events.ts, where each type and field is described.
 *
 * Every event is `{ type, version, id, time, ...payload }`. `id` is deterministic (derived from
 * what the event says, never random) so that re-sending it after a crash or a NATS outage is
 * deduplicated by JetStream's `msgID` and by the embedded log. No event carries an API key in
 * clear text: keys appear as `keyId` (a public identifier), `keyHash` (SHA-256) and
 * `keyCipher` (AES-256-GCM under TOLLGATE_SECRET, so that the owner can see it again).
 */

/** A (network, node kind) pair an account may use. */
export type Entitlement = Static<typeof entitlementSchema>
export type { NodeKind } from '../core/node-kind.js'
/** An ERC-20 transfer as checked on chain (one Transfer log of one transaction). */
export type TokenTransfer = Static<typeof tokenTransferSchema>

type EventSchemas = typeof eventSchemas
export type EventType = keyof EventSchemas
/** The event of type `T`, as read back from a log (fields that older versions lack are optional). */
export type EventOf<T extends EventType> = Static<EventSchemas[T]>

export type TollgateEvent = { [T in EventType]: EventOf<T> }[EventType]

export type AccountCreated = EventOf<'AccountCreated'>
export type PlanActivated = EventOf<'PlanActivated'>
export type PlanEnded = EventOf<'PlanEnded'>
export type NodesSelected = EventOf<'NodesSelected'>
export type KeyIssued = EventOf<'KeyIssued'>
export type KeyRevoked = EventOf<'KeyRevoked'>
export type SignedIn = EventOf<'SignedIn'>
export type SignedOut = EventOf<'SignedOut'>
export type FreePlanClaimed = EventOf<'FreePlanClaimed'>
export type InvoiceCreated = EventOf<'InvoiceCreated'>
export type PaymentConfirmed = EventOf<'PaymentConfirmed'>
export type PaymentUnmatched = EventOf<'PaymentUnmatched'>
export type PrivateNodeRequested = EventOf<'PrivateNodeRequested'>
export type DomainsRestricted = EventOf<'DomainsRestricted'>
export type DedicatedNodeAttached = EventOf<'DedicatedNodeAttached'>
export type KeyRestricted = EventOf<'KeyRestricted'>
export type KeyRuleRefused = EventOf<'KeyRuleRefused'>
export type JwtKeyRegistered = EventOf<'JwtKeyRegistered'>
export type JwtKeyRemoved = EventOf<'JwtKeyRemoved'>
export type KeyTokenRequired = EventOf<'KeyTokenRequired'>
export type RateLimited = EventOf<'RateLimited'>
export type IpThrottled = EventOf<'IpThrottled'>
export type UsageRecorded = EventOf<'UsageRecorded'>
export type WsLimited = EventOf<'WsLimited'>
export type WsCooldownStarted = EventOf<'WsCooldownStarted'>
export type WsPenaltyImposed = EventOf<'WsPenaltyImposed'>
export type NotificationsRecorded = EventOf<'NotificationsRecorded'>

/** Why WebSocket traffic of a key was refused (see actors/account/ws-limits.ts). */
export type WsLimitReason = WsLimited['reason']

/** An event as read back from a log, with its position. */
export interface StoredEvent {
  /** Position in the log, from 1, gap-free per log (JetStream stream sequence or embedded counter). */
  seq: number
  event: TollgateEvent
}

/** Current schema version of each type (declared in schemas/events.ts). */
export const EVENT_VERSIONS: { readonly [T in EventType]: number } = Object.freeze(
  Object.fromEntries(Object.entries(eventSchemas).map(([type, schema]) => [type, schema.properties.version.const as number])) as Record<EventType, number>,
)

export const EVENT_TYPES = Object.keys(EVENT_VERSIONS) as EventType[]

/**
 * NATS subject of an event. Every subject carries the account as its third token (`_` for an
 * event of no account, such as an IP throttle), so that one JetStream filter,
 * `<prefix>.*.<accountId>.*`, takes one account's events from the server:
 * - `<prefix>.accounts.<accountId>.events`: the account's own stream (accounts, plans, nodes,
 *   keys, invoices and payments, sign-in): one subject per account, because an append to it
 *   carries the expected last sequence of that subject (nats-server 2.9 checks one exact subject);
 * - `<prefix>.decisions.<accountId>.<Type>`: rate limits, penalties, throttles, cooldowns;
 * - `<prefix>.usage.<accountId>.<Type>`: usage per key, network and interval.
 * Logs written before the account token (`<prefix>.<category>.<Type>`) are read alike: the
 * stream holds `<prefix>.>`.
 *
 * With `partitions` P > 1 (events.partitions), usage goes to `<prefix>-usage.<p>.<accountId>.<Type>`
 * instead, p = partitionOf(accountId, P): the subjects of partition p's own stream (partitions.ts).
 */
export function subjectOf(event: TollgateEvent, prefix = 'tollgate', partitions = 1): string {
  const category = categoryOf(event.type)
  const account = 'accountId' in event ? event.accountId : NO_ACCOUNT
  if (category === 'accounts') return accountStreamSubject(account, prefix)
  if (category === 'usage' && partitions > 1) return `${partitionPrefix(prefix, partitionOf(account, partitions))}.${account}.${event.type}`
  return `${prefix}.${category}.${account}.${event.type}`
}

/** The subject token of events that belong to no account. */
const NO_ACCOUNT = '_'

/** The subject of an account's own stream (see subjectOf). */
export function accountStreamSubject(accountId: string, prefix = 'tollgate'): string {
  return `${prefix}.accounts.${accountId}.events`
}

export function categoryOf(type: EventType): 'accounts' | 'decisions' | 'usage' {
  switch (type) {
    case 'AccountCreated':
    case 'PlanActivated':
    case 'PlanEnded':
    case 'NodesSelected':
    case 'KeyIssued':
    case 'KeyRevoked':
    case 'SignedIn':
    case 'SignedOut':
    case 'FreePlanClaimed':
    case 'InvoiceCreated':
    case 'PaymentConfirmed':
    case 'PaymentUnmatched':
    case 'PrivateNodeRequested':
    case 'DomainsRestricted':
    case 'KeyRestricted':
    case 'JwtKeyRegistered':
    case 'JwtKeyRemoved':
    case 'KeyTokenRequired':
    case 'DedicatedNodeAttached':
      return 'accounts'
    case 'RateLimited':
    case 'WsLimited':
    case 'WsCooldownStarted':
    case 'WsPenaltyImposed':
    case 'IpThrottled':
    case 'KeyRuleRefused':
      return 'decisions'
    case 'UsageRecorded':
    case 'NotificationsRecorded':
      return 'usage'
  }
}

/** Events as callers build them: everything but the head, which makeEvent() fills in. */
export type EventInput<E extends TollgateEvent = TollgateEvent> = E extends TollgateEvent ? Omit<E, 'version' | 'id' | 'time'> : never
