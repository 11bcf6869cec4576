import type { Clock } from '../../actors/runtime/clock.js'
import { ActorRegistry } from '../../actors/runtime/registry.js'
import { AccountActor, takeConsumedOf, type Consumption } from '../../actors/account/account-actor.js'
import { scaled } from '../../actors/fleet/shares.js'
import type { RateLimits } from '../../actors/fleet/hot-accounts.js'
import { initialRateState } from '../../actors/account/decide.js'
import type { RateState } from '../../actors/account/decide.js'
import { DEFAULT_WS_KEY_LIMITS, type WsKeyLimits, wsKeyLimitsOf } from '../../actors/account/ws-limits.js'
import type { WsConfig } from '../config/types.js'
import { hashApiKey, isWellFormedApiKey, sameHash } from '../keys/api-key.js'
import type { StateStore, AccountRecord, KeyRecord } from '../store/state-store.js'
import type { Plan, PlanCatalog } from '../plans/catalog.js'
import { refusal } from '../errors/messages.js'
import { GatewayError } from '../errors/registry.js'
import { accessOn, type Access } from '../plans/entitlements.js'

/** What the request path knows about an authenticated key. */
export interface KeyContext {
  readonly keyHash: string
  record: KeyRecord
  account: AccountRecord
  plan: Plan | undefined
  /**
   * The actor of the key's account: every live key of an account (the active one and those in
   * the grace period of a regeneration) shares it, so rotating a key never multiplies the plan's
   * rate or WebSocket connections; they are one credential being rotated.
   */
  readonly actor: AccountActor
  /** What the key may use per network, computed on first use and dropped when the account changes. */
  access: Map<string, Access>
  /** The end of the plan period was reported (one PlanEnded per period). */
  endReported: boolean
}

/** Called once when a key's plan is found past its end: the host emits PlanEnded. */
export type PlanEndedHook = (account: AccountRecord, planId: string, startsAt: number, endedAt: number) => void

/**
 * Resolves API keys to their actor and projected state. The LMDB projection is the truth; this
 * keeps one KeyContext per active key (its actor with its token buckets) and refreshes it when the
 * projector applies events that touch the key or its account, so that a revoked key stops working
 * as soon as the event is projected, without a lookup per call.
 */
export class KeyDirectory {
  readonly #store: StateStore
  #catalog: PlanCatalog
  readonly #clock: Clock
  readonly #registry: ActorRegistry<string, KeyContext | null>
  readonly #ws: WsConfig | undefined
  readonly #onPlanEnded: PlanEndedHook | undefined
  /** The actor of each account with a key in memory, and how many such keys hold it. */
  readonly #actors = new Map<string, { actor: AccountActor; holders: number }>()
  /** Accounts whose actor admitted something since `takeConsumed()` last ran (for the fleet). */
  #consumers = new Map<AccountActor, string>()
  /** What other instances admitted for accounts with no actor here yet, kept for a second. */
  readonly #elsewhere = new Map<string, { consumed: Consumption; at: number }>()
  /** The part of each limit this instance applies (1 but when cut off from its fleet). */
  #share = 1

  /** `ws`: the configured WebSocket limits (default: the spec's). */
  constructor(store: StateStore, catalog: PlanCatalog, clock: Clock, opts: { idleMs?: number; onPlanEnded?: PlanEndedHook; ws?: WsConfig } = {}) {
    const idleMs = opts.idleMs ?? 5 * 60_000
    this.#onPlanEnded = opts.onPlanEnded
    this.#ws = opts.ws
    this.#store = store
    this.#catalog = catalog
    this.#clock = clock
    this.#registry = new ActorRegistry<string, KeyContext | null>({
      clock,
      idleMs,
      create: (keyHash) => this.#load(keyHash),
      // A key with open WebSocket connections keeps its actor: a fresh one would count none of them.
      canPassivate: (ctx) => ctx === null || ctx.actor.wsOpen === 0,
      passivate: (ctx) => this.#release(ctx),
    })
  }

  /**
   * The key's context, or the GatewayError to answer (401 missing, unknown or revoked; 403 plan
   * not active). Constant-time with respect to the key: the hash is compared in constant time
   * and looked up by hash, never by the clear key.
   */
  resolve(apiKey: string): KeyContext | GatewayError {
    if (apiKey === '') return new GatewayError('MISSING_KEY')
    if (!isWellFormedApiKey(apiKey)) return refusal('KEY_MALFORMED', {})
    const hash = hashApiKey(apiKey)
    const ctx = this.#contextOf(hash)
    if (ctx instanceof GatewayError) return ctx
    if (!sameHash(ctx.record.keyHash, hash)) return new GatewayError('INVALID_KEY')
    return this.refusalNow(ctx) ?? ctx
  }

  /** The context of the key with this hash, or INVALID_KEY; an unknown key is not kept in the registry: a key issued a moment later must work. */
  #contextOf(hash: string): KeyContext | GatewayError {
    const ctx = this.#registry.get(hash)
    if (ctx !== null) return ctx
    this.#registry.delete(hash)
    return new GatewayError('INVALID_KEY')
  }

  /**
   * The context of a key named by its public id (a signed token's `sub`), or the refusal: as
   * `resolve`, without the clear key, which a token carries instead of. Only a verified token's
   * owner is used for calls; before the signature is checked this tells "no such key" early.
   */
  resolveById(keyId: string): KeyContext | GatewayError {
    const hash = this.#store.keyHashById(keyId)
    if (hash === undefined) return refusal('TOKEN_SUB_UNKNOWN', {})
    const ctx = this.#contextOf(hash)
    return ctx instanceof GatewayError ? ctx : (this.refusalNow(ctx) ?? ctx)
  }

  /** Whether `ctx` is the context in force for its key (not passivated, not reloaded as another): a cached verification holds only while it is. */
  isCurrent(ctx: KeyContext): boolean {
    return this.#registry.peek(ctx.keyHash) === ctx
  }

  /**
   * Why a resolved key may not be used now (revoked or regenerated 401, plan inactive or ended
   * 403), or undefined while it may. Checked at every request, and for open WebSocket connections
   * at every message.
   */
  refusalNow(ctx: KeyContext): GatewayError | undefined {
    const now = this.#clock.now()
    if (ctx.record.revokedAt !== null && ctx.record.revokedAt <= now) {
      return refusal('KEY_REVOKED', {})
    }
    const plan = ctx.account.plan
    if (!plan || !ctx.plan) return refusal('NO_ACTIVE_PLAN', {})
    if (plan.endsAt !== null && plan.endsAt <= now) {
      if (!ctx.endReported) {
        ctx.endReported = true
        this.#onPlanEnded?.(ctx.account, plan.planId, plan.startsAt, plan.endsAt)
      }
      const trial = ctx.plan.nodes.rule === 'all-full' && ctx.plan.priceUsdPerMonth === null
      return refusal(trial ? 'TRIAL_ENDED' : 'PLAN_ENDED', { plan: ctx.plan.name, endedAt: plan.endsAt })
    }
    return undefined
  }

  /** The node kinds this key may use on `network` (cached per key until its account changes). */
  accessOn(ctx: KeyContext, network: string): Access {
    let access = ctx.access.get(network)
    if (access === undefined) {
      access = accessOn(ctx.plan, ctx.account.nodes, network)
      ctx.access.set(network, access)
    }
    return access
  }

  /** Reload the keys and accounts a projected batch touched (called by the projector). */
  refresh(changes: { keyHashes: readonly string[]; accountIds: readonly string[] }): void {
    for (const hash of changes.keyHashes) {
      const ctx = this.#registry.peek(hash)
      if (ctx === undefined) continue
      if (ctx === null) {
        this.#registry.delete(hash)
        continue
      }
      const record = this.#store.keyByHash(hash)
      if (record) {
        ctx.record = record
        this.#restoreWsBlocks(ctx)
      } else {
        this.#registry.delete(hash)
        this.#release(ctx)
      }
    }
    if (changes.accountIds.length === 0) return
    const accounts = new Set(changes.accountIds)
    this.#registry.forEach((ctx) => {
      if (!ctx || !accounts.has(ctx.account.accountId)) return
      const account = this.#store.account(ctx.account.accountId)
      if (!account) return
      ctx.account = account
      ctx.plan = account.plan ? this.#catalog.get(account.plan.planId) : undefined
      ctx.access = new Map()
      ctx.endReported = false
    })
    for (const accountId of accounts) {
      const entry = this.#actors.get(accountId)
      const account = entry && this.#store.account(accountId)
      if (!entry || !account) continue
      const plan = account.plan ? this.#catalog.get(account.plan.planId) : undefined
      entry.actor.updateLimits(this.#limitsOf(plan), this.#wsLimitsOf(plan))
    }
  }

  /**
   * A reload's plan catalog: every key in memory takes its plan from it now, and every actor its
   * limits (bucket levels kept, as at a plan change), so that a limit changed in the catalog holds
   * from the next call without a restart.
   */
  apply(next: { catalog: PlanCatalog }): void {
    this.#catalog = next.catalog
    const accountIds = new Set(this.#actors.keys())
    this.#registry.forEach((ctx) => {
      if (ctx) accountIds.add(ctx.account.accountId)
    })
    this.refresh({ keyHashes: [], accountIds: [...accountIds] })
  }

  /** Passivate idle keys (their durable facts come back from LMDB, their buckets start full). */
  sweep(): void {
    this.#registry.sweep()
  }

  /** What each account's actor admitted since the last call, with its open connections now. */
  takeConsumed(): { accountId: string; consumed: Consumption; open: number }[] {
    const out = takeConsumedOf(this.#consumers)
    this.#consumers = new Map()
    const now = this.#clock.now()
    for (const [accountId, e] of this.#elsewhere) if (now - e.at > ELSEWHERE_KEPT_MS) this.#elsewhere.delete(accountId)
    return out
  }

  /** Every account with WebSocket connections open here, and how many. */
  openConnections(): { accountId: string; open: number }[] {
    const out: { accountId: string; open: number }[] = []
    for (const [accountId, { actor }] of this.#actors) if (actor.wsOpen > 0) out.push({ accountId, open: actor.wsOpen })
    return out
  }

  /** Another instance admitted this for the account: its budget here shrinks as much. */
  consumedElsewhere(accountId: string, consumed: Consumption): void {
    const entry = this.#actors.get(accountId)
    if (entry !== undefined) return entry.actor.consumedElsewhere(consumed)
    // No actor here yet: keep it, so that an actor made in the next second does not start as if
    // the key had been idle across the fleet.
    const kept = this.#elsewhere.get(accountId)
    if (kept === undefined) return void this.#elsewhere.set(accountId, { consumed: { ...consumed }, at: this.#clock.now() })
    for (const k of ['full', 'archive', 'fullUnits', 'archiveUnits', 'messages', 'connects'] as const) kept.consumed[k] += consumed[k]
    kept.consumed.cooldownUntil = Math.max(kept.consumed.cooldownUntil, consumed.cooldownUntil)
    kept.consumed.penaltyUntil = Math.max(kept.consumed.penaltyUntil, consumed.penaltyUntil)
    // The connections kept count from the newest of them (absent: from when they are applied).
    if (kept.consumed.connectedAt !== undefined)
      kept.consumed.connectedAt = consumed.connectedAt === undefined ? undefined : Math.max(kept.consumed.connectedAt, consumed.connectedAt)
  }

  /**
   * The account's whole limits per second, as its plan gives them to the fleet (not this
   * instance's share): what an account's owner in the fleet judges its consumption against. Read
   * from the projection, so an owner that serves none of the account's calls knows them too.
   */
  limitsOf(accountId: string): RateLimits | undefined {
    const account = this.#store.account(accountId)
    if (account === undefined) return undefined
    const plan = account.plan ? this.#catalog.get(account.plan.planId) : undefined
    const calls = limitsOf(plan)
    const ws = wsLimitsOf(plan, this.#ws)
    return {
      full: calls.full,
      archive: calls.archive,
      fullUnits: calls.fullUnits ?? null,
      archiveUnits: calls.archiveUnits ?? null,
      messages: ws.messagesPerSecond,
      connects: ws.newConnectionsPerSecond,
    }
  }

  /**
   * Apply `share` of every limit (the fleet's conservative part while cut off from the others; 1
   * again when back). Bucket levels are kept, capped at the new burst: coming back gives no burst.
   */
  setShare(share: number): void {
    if (share === this.#share) return
    this.#share = share
    for (const [accountId, { actor }] of this.#actors) {
      const account = this.#store.account(accountId)
      const plan = account?.plan ? this.#catalog.get(account.plan.planId) : undefined
      actor.updateLimits(this.#limitsOf(plan), this.#wsLimitsOf(plan))
    }
  }

  get share(): number {
    return this.#share
  }

  #limitsOf(plan: Plan | undefined): RateState['limits'] {
    const limits = limitsOf(plan)
    return {
      full: scaled(limits.full, this.#share),
      archive: scaled(limits.archive, this.#share),
      fullUnits: scaled(limits.fullUnits ?? null, this.#share),
      archiveUnits: scaled(limits.archiveUnits ?? null, this.#share),
    }
  }

  #wsLimitsOf(plan: Plan | undefined): WsKeyLimits {
    const limits = wsLimitsOf(plan, this.#ws)
    return { ...limits, messagesPerSecond: scaled(limits.messagesPerSecond, this.#share) }
  }

  get size(): number {
    return this.#registry.size
  }

  #load(keyHash: string): KeyContext | null {
    const record = this.#store.keyByHash(keyHash)
    if (!record) return null
    const account = this.#store.account(record.accountId)
    if (!account) return null
    const plan = account.plan ? this.#catalog.get(account.plan.planId) : undefined
    const ctx: KeyContext = { keyHash, record, account, plan, actor: this.#acquire(record, plan), access: new Map(), endReported: false }
    this.#restoreWsBlocks(ctx)
    return ctx
  }

  /** The account's actor (made with full buckets when none of its keys is in memory). */
  #acquire(record: KeyRecord, plan: Plan | undefined): AccountActor {
    let entry = this.#actors.get(record.accountId)
    if (entry === undefined) {
      const state: RateState = initialRateState(
        { keyId: record.keyId, accountId: record.accountId, limits: this.#limitsOf(plan), ws: this.#wsLimitsOf(plan) },
        this.#clock.now(),
      )
      const accountId = record.accountId
      const actor = new AccountActor(state, this.#clock, (a) => this.#consumers.set(a, accountId))
      entry = { actor, holders: 0 }
      this.#actors.set(accountId, entry)
      const elsewhere = this.#elsewhere.get(accountId)
      if (elsewhere !== undefined) {
        this.#elsewhere.delete(accountId)
        actor.consumedElsewhere(elsewhere.consumed)
      }
    }
    entry.holders++
    return entry.actor
  }

  /** A key context left memory: the account's actor goes when no key holds it. */
  #release(ctx: KeyContext | null): void {
    if (ctx === null) return
    const entry = this.#actors.get(ctx.account.accountId)
    if (entry === undefined || entry.actor !== ctx.actor) return
    if (--entry.holders <= 0) this.#actors.delete(ctx.account.accountId)
  }

  /** A WebSocket cooldown or penalty decided before a restart, or by another instance, holds here too. */
  #restoreWsBlocks(ctx: KeyContext): void {
    const blocks = this.#store.wsBlocks(ctx.record.keyId)
    if (blocks !== undefined) ctx.actor.ws({ type: 'WsBlocksRestored', cooldownUntil: blocks.cooldownUntil, penaltyUntil: blocks.penaltyUntil })
  }
}

/** How long consumption reported by other instances is kept for an account with no actor here. */
const ELSEWHERE_KEPT_MS = 1_000

/**
 * The WebSocket limits a plan gives a key. The spec's message limit (500/s) is capped by the
 * plan's full-node rps, so that a set B plan of 2 requests per second cannot send 500 messages
 * per second over WebSocket instead; an unlimited plan (Private Node) is unlimited here too.
 */
export function wsLimitsOf(plan: Plan | undefined, ws: WsConfig | undefined): WsKeyLimits {
  const base = wsKeyLimitsOf(ws ?? DEFAULT_WS_KEY_LIMITS)
  const fullRps = plan?.limits.fullRps
  if (fullRps === null) return { ...base, messagesPerSecond: null }
  if (fullRps !== undefined && fullRps > 0 && base.messagesPerSecond !== null) return { ...base, messagesPerSecond: Math.min(base.messagesPerSecond, fullRps) }
  return base
}

/** The HTTP limits a plan gives a key: rps per node kind, null unlimited, 0 none; units per second per node kind, null none. */
function limitsOf(plan: Plan | undefined): RateState['limits'] {
  if (!plan) return { full: 0, archive: 0, fullUnits: null, archiveUnits: null }
  return {
    full: plan.limits.fullRps,
    archive: plan.limits.archiveRps,
    fullUnits: plan.limits.fullUnitsPerSecond ?? null,
    archiveUnits: plan.limits.archiveUnitsPerSecond ?? null,
  }
}
