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
  /**
   * The start of the period that ended (its PlanActivated's startsAt): a renewal activated since
   * is a later period and is not ended. Absent in version 1 events (they end the plan they name).
   */
  startsAt?: number
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

/**
 * A wallet signed in with Sign-In with Ethereum. The nonce is used once: the first SignedIn of a
 * nonce in the log wins (the projection ignores later ones), so a replayed message never opens a
 * second session, even from another instance. Only the session's hash is here, never its token.
 */
export interface SignedIn extends EventHead<'SignedIn'> {
  accountId: string
  /** Lower-case 0x address that signed. */
  wallet: string
  /** The SIWE nonce the message carried (public once used). */
  nonce: string
  /** hex SHA-256 of the session token (the cookie). */
  sessionHash: string
  expiresAt: number
}

/** A session ended before its expiry (the owner signed out). */
export interface SignedOut extends EventHead<'SignedOut'> {
  accountId: string
  sessionHash: string
}

/**
 * A free plan (the Free Trial) was taken by an account, which is one wallet: the first claim in the
 * log wins, and its `attempt` (random per request) tells the request that made it that it won.
 */
export interface FreePlanClaimed extends EventHead<'FreePlanClaimed'> {
  accountId: string
  planId: string
  attempt: string
}

/** A paid plan was chosen: what to pay, in which token, to whom. */
export interface InvoiceCreated extends EventHead<'InvoiceCreated'> {
  accountId: string
  invoiceId: string
  planId: string
  /** The nodes chosen (Tier 1 and 2); empty: all the plan allows. */
  nodes: Entitlement[]
  /** Network slug of the payment. */
  network: string
  /** Lower-case 0x address of the ERC-20 token. */
  token: string
  /** Lower-case 0x address that receives the payment. */
  treasury: string
  /** Amount due in the token's smallest unit, as a decimal string (it may not fit a double). */
  amount: string
  /** The token's decimals, read from the contract when the invoice was made. */
  decimals: number
  priceUsd: number
  /**
   * Until when (ms since epoch) these terms hold: a transfer mined in a later block does not pay
   * this invoice (PaymentUnmatched). Version 2; absent in version 1 events (no expiry).
   */
  expiresAt?: number
}

/**
 * An on-chain transfer paid an invoice. Its id comes from (network, tx hash, log index) only, so
 * one transfer offered for two invoices is one fact: the log keeps the first (JetStream msgID,
 * the embedded log's id index), and the projection ignores a later one with another invoice.
 */
export interface PaymentConfirmed extends EventHead<'PaymentConfirmed'>, TokenTransfer {
  accountId: string
  invoiceId: string
  /** Timestamp of the transfer's block (ms since epoch): at most the invoice's expiresAt. Version 2; absent in version 1. */
  minedAt?: number
  /** Random per request: tells the request whose event the log kept that it won. */
  attempt: string
}

/** An ERC-20 transfer as checked on chain (one Transfer log of one transaction). */
export interface TokenTransfer {
  network: string
  txHash: string
  logIndex: number
  /** Lower-case 0x address the tokens came from (the account's wallet). */
  from: string
  /** Amount transferred, smallest unit, decimal string. */
  amount: string
  blockNumber: number
  blockHash: string
}

/**
 * A transfer from the account's wallet to the treasury, offered for an invoice, that did not pay
 * it because it was mined after the invoice expired. Recorded so that the payment is not lost:
 * operators see it (`tollgate events`), the owner sees it on the invoice, and the same transfer
 * can still pay a fresh invoice at the terms of the day (it is not marked used).
 */
export interface PaymentUnmatched extends EventHead<'PaymentUnmatched'>, TokenTransfer {
  accountId: string
  invoiceId: string
  reason: 'invoice-expired'
  /** The invoice's expiresAt. */
  invoiceExpiresAt: number
  /** Timestamp of the transfer's block (ms since epoch), later than invoiceExpiresAt. */
  minedAt: number
}

/** The owner asked for a Private Node; the operator attaches one (DedicatedNodeAttached). */
export interface PrivateNodeRequested extends EventHead<'PrivateNodeRequested'> {
  accountId: string
  /** What the owner would like (network, kind). */
  nodes: Entitlement[]
}

/** The browser origins (domains) a key may be used from; empty: any. */
export interface DomainsRestricted extends EventHead<'DomainsRestricted'> {
  accountId: string
  keyId: string
  /** Lower-case host names, `*.example.com` for subdomains, optionally with `:port`. */
  domains: string[]
}

/** The operator attached a dedicated upstream node to an account (Private Node). */
export interface DedicatedNodeAttached extends EventHead<'DedicatedNodeAttached'> {
  accountId: string
  network: string
  kind: NodeKind
  url: string
  /** WebSocket URL, null when the node has none. */
  ws: string | null
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
  | SignedIn
  | SignedOut
  | FreePlanClaimed
  | InvoiceCreated
  | PaymentConfirmed
  | PaymentUnmatched
  | PrivateNodeRequested
  | DomainsRestricted
  | DedicatedNodeAttached

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
  PlanEnded: 2,
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
  SignedIn: 1,
  SignedOut: 1,
  FreePlanClaimed: 1,
  InvoiceCreated: 2,
  PaymentConfirmed: 2,
  PaymentUnmatched: 1,
  PrivateNodeRequested: 1,
  DomainsRestricted: 1,
  DedicatedNodeAttached: 1,
})

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
 */
export function subjectOf(event: TollgateEvent, prefix = 'tollgate'): string {
  const category = categoryOf(event.type)
  const account = 'accountId' in event ? event.accountId : NO_ACCOUNT
  return category === 'accounts' ? accountStreamSubject(account, prefix) : `${prefix}.${category}.${account}.${event.type}`
}

/** The subject token of events that belong to no account. */
export const NO_ACCOUNT = '_'

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
    case 'DedicatedNodeAttached':
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
