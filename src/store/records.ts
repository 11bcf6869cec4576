import type { Entitlement, KeyRuleRefused, PaymentConfirmed } from '../events/types.js'
import type { NodeKind } from '../core/node-kind.js'
import { unitsOf } from '../events/usage-units.js'
import type { KeyRestrictions } from '../keys/key-restrictions.js'
import type { JwtPublicKey } from '../keys/jwt-keys.js'

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
  /** Methods, contracts, client IPs and user agents the key is restricted to (KeyRestricted); absent: none. */
  restrictions?: KeyRestrictions
  /** Refused without a signed token (KeyTokenRequired); absent: the key alone passes. */
  tokenRequired?: true
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
  /** Public keys the account's tokens may be signed with (JwtKeyRegistered); absent: none. */
  jwtKeys?: JwtPublicKey[]
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
  /**
   * Compute units of the calls served (UsageRecorded). A row written before units were counted
   * lacks it: it summed only version 1 events, so its units are its requests × 26 (unitsOf).
   */
  units: number
}

/** One row of the `usage` db: the totals of one key on one network and node kind. */
export interface UsageRow extends UsageTotals {
  accountId: string
  keyId: string
  network: string
  kind: NodeKind
}

/** Narrows usageTotals()/usageRows() (usage/usage-queries.ts); absent fields match everything. */
export interface UsageFilter {
  accountId?: string
  keyId?: string
  network?: string
  kind?: NodeKind
}

export function emptyUsage(): UsageTotals {
  return { requests: 0, errors: 0, bytesIn: 0, bytesOut: 0, rateLimited: 0, notifications: 0, units: 0 }
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

/** The payment a PaymentConfirmed records (the account decider and the billing projection both keep it). */
export function paymentOf(event: PaymentConfirmed): InvoicePayment {
  return {
    txHash: event.txHash.toLowerCase(),
    logIndex: event.logIndex,
    amount: event.amount,
    blockNumber: event.blockNumber,
    paidAt: event.time,
    attempt: event.attempt,
  }
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
  /** Until when its terms hold; absent: no expiry (an invoice made before invoices expired). */
  expiresAt?: number
  paid: InvoicePayment | null
  /** The plan of this invoice was activated (PlanActivated seen after the payment). */
  activated: boolean
  /** Transfers offered for it after it expired (PaymentUnmatched): recorded, they did not pay it. */
  latePayments?: LatePayment[]
}

/** A transfer mined after its invoice expired (PaymentUnmatched). */
export interface LatePayment {
  txHash: string
  logIndex: number
  amount: string
  minedAt: number
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
  /** Their compute units (absent in rows written before units: see UsageTotals.units). */
  units: number
}

/** One row of usageHourly(): an hour (start, ms since epoch) of one network and node kind. */
export interface HourlyUsageRow extends HourlyUsage {
  hour: number
  network: string
  kind: NodeKind
}

/** meta: the layout the store was built by (see StateStore.version()). */
export const LAYOUT_VERSION = 'version'

export const HOUR_MS = 3_600_000
export const DAY_MS = 24 * HOUR_MS

/**
 * How much usage by hour is kept for the dashboard's chart, behind the newest day of usage: the
 * chart's longest view is 168 hours, and a day more covers a week back from any hour of today.
 */
export const USAGE_HOURLY_KEPT_MS = 8 * DAY_MS

/** Key of the `usageHourly` db: account first, then the hour zero-padded so that keys sort by time. */
export function hourlyUsageKey(accountId: string, hour: number, network: string, kind: NodeKind): string {
  return `${accountId}|${String(hour).padStart(15, '0')}|${network}|${kind}`
}

/** Key of the `sessionsByAccount` db: the account's sessions in the order they end in (see siwe/sessions.ts). */
export function accountSessionKey(accountId: string, order: string): string {
  return `${accountId}|${order}`
}

/** Key of the `invoicesByAccount` db: the account's invoices in creation order. */
export function accountInvoiceKey(accountId: string, createdAt: number, invoiceId: string): string {
  return `${accountId}|${String(createdAt).padStart(15, '0')}|${invoiceId}`
}

/** What UsageRecorded events of one key add up to (the figures of `tollgate usage`), and its KeyRuleRefused. */
export interface KeyUsage {
  requests: number
  errors: number
  bytesIn: number
  bytesOut: number
  /** Compute units (absent in rows written before units: see UsageTotals.units). */
  units: number
  /**
   * Calls refused by the key's own rules (KeyRuleRefused), by rule; absent when there were none, so
   * that a row of a key that no rule refused is the row it was before refusals were counted.
   */
  refused?: RefusalsByRule
}

/** The rules of a key that refuse calls (src/keys/key-restrictions.ts), in the order they are shown. */
export const REFUSAL_RULES = ['method', 'contract', 'ip', 'user-agent'] as const satisfies readonly KeyRuleRefused['rule'][]

/** Calls refused per rule; a rule that refused none is absent. */
export type RefusalsByRule = Partial<Record<KeyRuleRefused['rule'], number>>

/** `a` and `b` added, rule by rule in REFUSAL_RULES order (a fixed order: the rows' bytes, and so the replay digest, follow it); undefined when both are empty. */
export function addRefusals(a: RefusalsByRule | undefined, b: RefusalsByRule | undefined): RefusalsByRule | undefined {
  if (a === undefined && b === undefined) return undefined
  const sum: RefusalsByRule = {}
  for (const rule of REFUSAL_RULES) {
    const n = (a?.[rule] ?? 0) + (b?.[rule] ?? 0)
    if (n > 0) sum[rule] = n
  }
  return Object.keys(sum).length === 0 ? undefined : sum
}

/** One row of the `keyUsageHours` db: a key's UsageRecorded sums in one hour (start, ms since epoch). */
export interface KeyUsageHourRow extends KeyUsage {
  hour: number
  accountId: string
  keyId: string
}

/** One row of the `keyUsageFolded` db: a key's sums over every hour before keyUsageFoldedBefore(). */
export interface KeyUsageFoldedRow extends KeyUsage {
  accountId: string
  keyId: string
}

/**
 * How many hours (up to the newest hour of usage seen) keep their own row per key; older hours
 * are folded into one row per key. Without a bound the table grows by one row per key and hour
 * for ever; 35 days keep the previous calendar month queryable by hour into the next month's
 * first days, at most 840 rows per key.
 */
export const KEY_USAGE_HOURS_KEPT = 35 * 24

/**
 * Key of the `keyUsageHours` db: the hour first (zero-padded, so that keys sort by time), so that
 * a time range and the hours to fold are each one key range.
 */
export function keyUsageHourKey(hour: number, accountId: string, keyId: string): string {
  return `${keyUsageHourStart(hour)}|${accountId}|${keyId}`
}

/** The first key of an hour in `keyUsageHours`: a range that ends here ends before that hour. */
export function keyUsageHourStart(hour: number): string {
  return String(hour).padStart(15, '0')
}

/** Key of the `keyUsageFolded` db; the account first, so that one account's keys are a key range. */
export function keyUsageFoldedKey(accountId: string, keyId: string): string {
  return `${accountId}|${keyId}`
}

/** A KeyUsage with `b` added to `a` (either may be absent: a row not written yet). */
export function addKeyUsage(a: KeyUsage | undefined, b: KeyUsage): KeyUsage {
  const sum: KeyUsage = {
    requests: (a?.requests ?? 0) + b.requests,
    errors: (a?.errors ?? 0) + b.errors,
    bytesIn: (a?.bytesIn ?? 0) + b.bytesIn,
    bytesOut: (a?.bytesOut ?? 0) + b.bytesOut,
    units: (a === undefined ? 0 : unitsOf(a)) + unitsOf(b),
  }
  const refused = addRefusals(a?.refused, b.refused)
  if (refused !== undefined) sum.refused = refused
  return sum
}

/** meta: the newest intervalStart of a usage event (ms); the usage windows end there (usage/usage-dedup.ts). */
export const USAGE_NEWEST = 'usageNewest'

/** Key of the `usageEvents` db: the interval first (15 digits, so that keys sort by it), so that the ids that leave the window are one key range. */
export function usageEventKey(intervalStart: number, id: string): string {
  return `${String(intervalStart).padStart(15, '0')}|${id}`
}
