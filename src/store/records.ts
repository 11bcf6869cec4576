import type { Entitlement, NodeKind } from '../events/types.js'

/**
 * The records the projections keep in LMDB (msgpack values). They are derived from the event log
 * only: every field here can be rebuilt by replaying it (src/projections/replay.ts).
 */

/** An API key as the gateway knows it: never the key in clear, only its hash and its cipher. */
export interface KeyRecord {
  keyId: string
  accountId: string
  /** hex SHA-256 of the key string: what the request path looks up. */
  keyHash: string
  /** base64url AES-256-GCM of the key under TOLLGATE_SECRET, so that the owner can see it again. */
  keyCipher: string
  issuedAt: number
  /** From when the key no longer works (ms since epoch, may be in the future: a grace period); null: not revoked. */
  revokedAt: number | null
  /** Browser domains the key may be used from (Origin/Referer); absent or empty: any. */
  domains?: string[]
}

/** The plan period an account has (the plan's limits come from the plan catalog by planId). */
export interface PlanState {
  planId: string
  startsAt: number
  /** null: no end. */
  endsAt: number | null
}

export interface AccountRecord {
  accountId: string
  /** Lower-case 0x address. */
  wallet: string
  createdAt: number
  /** null: no plan activated, or the last one ended. */
  plan: PlanState | null
  /** The (network, node kind) pairs selected; empty means "all the plan allows". */
  nodes: Entitlement[]
  /** The key that the owner sees in the dashboard; null when none is active. */
  activeKeyId: string | null
}

/**
 * A decision in force that restricts a key or an IP until a time (an IP throttle, later
 * connection cooldowns and message penalties), stored under `<subject>:<id>` (e.g. `ip:1.2.3.4`).
 */
export interface PenaltyRecord {
  /** ip-throttle under `ip:<address>`; ws-cooldown and ws-penalty under wsCooldownKey() and wsPenaltyKey(). */
  kind: 'ip-throttle' | 'ws-cooldown' | 'ws-penalty'
  reason: string
  since: number
  /** ms since epoch when it lifts by itself. */
  until: number
}

/** Usage summed over every interval and instance. */
export interface UsageTotals {
  requests: number
  errors: number
  bytesIn: number
  bytesOut: number
  /** Calls rejected by a rate limit (from RateLimited events). */
  rateLimited: number
  /** Subscription notifications sent over WebSocket (from NotificationsRecorded; their bytes are in bytesOut). */
  notifications: number
}

/** One row of the `usage` db: the totals of one key on one network and node kind. */
export interface UsageRow extends UsageTotals {
  accountId: string
  keyId: string
  network: string
  kind: NodeKind
}

/** Narrows usageTotals()/usageRows(); absent fields match everything. */
export interface UsageFilter {
  accountId?: string
  keyId?: string
  network?: string
  kind?: NodeKind
}

export function emptyUsage(): UsageTotals {
  return { requests: 0, errors: 0, bytesIn: 0, bytesOut: 0, rateLimited: 0, notifications: 0 }
}

/**
 * The WebSocket blocks of a key, read from its two records in the `penalties` db (a
 * WsCooldownStarted and a WsPenaltyImposed fold into them): the key's actor reads them on
 * activation, so that a restart or another instance on the same log enforces them too.
 */
export interface WsBlocks {
  /** New connections refused until then (ms since epoch); 0: none. */
  cooldownUntil: number
  /** Messages refused until then; 0: none. */
  penaltyUntil: number
}

/** Key of a key's WebSocket connection cooldown in the `penalties` db. */
export function wsCooldownKey(keyId: string): string {
  return `ws-cooldown:${keyId}`
}

/** Key of a key's WebSocket message penalty in the `penalties` db. */
export function wsPenaltyKey(keyId: string): string {
  return `ws-penalty:${keyId}`
}

/** Key of the `usage` db. Its first field is the account so that one account's rows are a key range. */
export function usageKey(accountId: string, keyId: string, network: string, kind: NodeKind): string {
  return `${accountId}|${keyId}|${network}|${kind}`
}

/** Whether a key record lets calls through at `now` (a revocation with a grace period is not yet in force). */
export function isKeyActive(key: KeyRecord, now: number): boolean {
  return key.revokedAt === null || now < key.revokedAt
}

/** A dashboard session (Sign-In with Ethereum), by the hash of its cookie token. */
export interface SessionRecord {
  accountId: string
  wallet: string
  expiresAt: number
}

/** The paid part of an invoice, from the PaymentConfirmed that won. */
export interface InvoicePayment {
  txHash: string
  logIndex: number
  amount: string
  blockNumber: number
  /** When the payment was confirmed: the paid period starts here. */
  paidAt: number
  attempt: string
}

/** An invoice of a paid plan (InvoiceCreated, then PaymentConfirmed, then the plan activated). */
export interface InvoiceRecord {
  invoiceId: string
  accountId: string
  planId: string
  nodes: Entitlement[]
  network: string
  token: string
  treasury: string
  amount: string
  decimals: number
  priceUsd: number
  createdAt: number
  paid: InvoicePayment | null
  /** The plan of this invoice was activated (PlanActivated seen after the payment). */
  activated: boolean
}

/**
 * The first of competing facts, by claim key: `nonce|<nonce>` (a SIWE nonce → the session it
 * opened), `free|<account>|<plan>` (a free plan taken), `pay|<network>|<tx>|<logIndex>` (a
 * transfer → the invoice it paid). `by` identifies the winner (session hash, attempt).
 */
export interface ClaimRecord {
  by: string
  /** The invoice a transfer paid (pay| claims only). */
  invoiceId?: string
  at: number
}

/** A Private Node request and the dedicated nodes attached to the account. */
export interface PrivateNodeRecord {
  accountId: string
  requestedAt: number | null
  requested: Entitlement[]
  attached: Array<{ network: string; kind: NodeKind; url: string; ws: string | null; attachedAt: number }>
}

/** Calls of one account in one hour on one network and node kind. */
export interface HourlyUsage {
  requests: number
  errors: number
}

/** One row of usageHourly(): an hour (start, ms since epoch) of one network and node kind. */
export interface HourlyUsageRow extends HourlyUsage {
  hour: number
  network: string
  kind: NodeKind
}

export const HOUR_MS = 3_600_000

/** Key of the `usageHourly` db: account first, then the hour zero-padded so that keys sort by time. */
export function hourlyUsageKey(accountId: string, hour: number, network: string, kind: NodeKind): string {
  return `${accountId}|${String(hour).padStart(15, '0')}|${network}|${kind}`
}

/** Key of the `invoicesByAccount` db: the account's invoices in creation order. */
export function accountInvoiceKey(accountId: string, createdAt: number, invoiceId: string): string {
  return `${accountId}|${String(createdAt).padStart(15, '0')}|${invoiceId}`
}
