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
