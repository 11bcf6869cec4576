import type { Clock } from '../../actors/runtime/clock.js'
import type { Config } from '../config/types.js'
import type { EventLog } from '../events/log.js'
import { EventLogUnavailable } from '../events/errors.js'
import type { Entitlement } from '../events/types.js'
import type { NodeKind } from '../core/node-kind.js'
import { KeyCipher } from '../keys/key-cipher.js'
import type { PlanCatalog } from '../plans/catalog.js'
import type { Projector } from '../projections/projector.js'
import { claimKeys } from '../projections/billing-projection.js'
import type { StateStore } from '../store/state-store.js'
import type { AccountRecord, InvoiceRecord, SessionRecord } from '../store/records.js'
import type { Upstreams } from '../upstream/upstreams.js'
import { poolRpc, type ChainRpc } from '../chain/chain-rpc.js'
import { AccountHost } from '../accounts/account-host.js'
import { regenerateKey, type AccountCommandDeps } from '../accounts/commands.js'
import { claimFreePlan, isFreePlan } from '../accounts/free-plan.js'
import { registerJwtKey, removeJwtKey, requireToken, restrictDomains, restrictKey } from '../accounts/key-settings.js'
import { requestPrivateNode } from '../accounts/private-node.js'
import { createInvoice, type InvoiceDeps } from '../payments/invoices.js'
import { ensureActivated, payInvoice } from '../payments/pay-invoice.js'
import { TokenDecimals, usdOf } from '../payments/token.js'
import { SiweNonces } from '../siwe/nonces.js'
import { SessionTokens } from '../siwe/session-tokens.js'
import { sessionHashOf, signIn } from '../siwe/sign-in.js'
import { ApiError } from './api-errors.js'
import { ApiLimits } from './api-limits.js'
import { cookiePolicy, type CookiePolicy } from './session-cookie.js'
import { UsageUnavailable } from '../usage/errors.js'
import { accountUsageView, usageHours, type AccountUsageView } from '../usage/usage-view.js'

export interface DashboardDeps {
  config: Config
  log: EventLog
  store: StateStore
  projector: Projector
  catalog: PlanCatalog
  clock: Clock
  upstreams: Upstreams
  /** TOLLGATE_SECRET: decrypts keys for their owner, signs nonces. */
  secret: string
  /** The gateway's base URL (publicUrl, else the bound listen address): the SIWE domain and origin. */
  baseUrl: () => string
  /** The live instances of the fleet (absent: 1); limits for all clients together are split between them. */
  fleetSize?: () => number
  /** With usage.project false: an instance that projects usage asked for an account's view (src/usage/usage-answers.ts). */
  askUsage?: (accountId: string, hours: number, now: number) => Promise<AccountUsageView>
}

/** A signed-in dashboard user. */
export interface Session extends SessionRecord {
  sessionHash: string
}

/** Longest grace period the dashboard offers for a regenerated key. */
const MAX_GRACE_S = 30 * 24 * 3600

/**
 * What the dashboard's JSON API does, without HTTP: sign-in, the account's state, plans,
 * payments, keys and usage. Every change is a command that appends events and catches the
 * projections up (so the answer shows it); commands of one account run one at a time here.
 */
export class DashboardService {
  readonly #deps: DashboardDeps
  readonly #cipher: KeyCipher
  readonly #nonces: SiweNonces
  readonly #tokens: SessionTokens
  /** Runs the account commands: its mailboxes take one account's commands one at a time. */
  readonly #host: AccountHost
  readonly #decimals = new TokenDecimals()
  /** Our nodes of each chain, for contract wallets' signatures (with their own, shorter time-out). */
  readonly #signatureRpcs = new Map<number, ChainRpc>()
  #available: Entitlement[]
  readonly #timeoutMs: number
  /** The API's rate limits, per IP and per account (dashboard.limits). */
  readonly limits: ApiLimits

  constructor(deps: DashboardDeps) {
    this.#deps = deps
    this.#cipher = KeyCipher.fromSecret(deps.secret)
    // The catalog read at each command: a reload may replace it (see apply).
    this.#host = new AccountHost({
      log: deps.log,
      get catalog() {
        return deps.catalog
      },
      projector: deps.projector,
    })
    this.#nonces = new SiweNonces(deps.secret)
    this.#tokens = new SessionTokens(deps.secret)
    this.limits = new ApiLimits(deps.config.dashboard.limits, deps.clock, deps.fleetSize)
    this.#timeoutMs = Math.min(deps.config.limits.upstreamTimeoutMs, 15_000)
    this.#available = availableNodes(deps.config)
  }

  /**
   * A reload: plans and networks as the new config and catalog say, for the next request. The API
   * limits and time-outs stay those of the start (the dashboard section needs a restart).
   */
  apply(next: { config: Config; catalog: PlanCatalog }): void {
    this.#deps.config = next.config
    this.#deps.catalog = next.catalog
    this.#available = availableNodes(next.config)
  }

  get origin(): string {
    return new URL(this.#deps.baseUrl()).origin
  }

  /** The session cookie's name and attributes, from our public address (see session-cookie.ts). */
  get cookie(): CookiePolicy {
    return cookiePolicy(this.origin)
  }

  now(): number {
    return this.#deps.clock.now()
  }

  /** Take the client IP from X-Forwarded-For (behind a trusted reverse proxy), as the RPC path does. */
  get trustProxy(): boolean {
    return this.#deps.config.trustProxy
  }

  /** What the page needs before sign-in: networks, plans, payment terms, sign-in domain. */
  publicConfig(): unknown {
    const { config, catalog } = this.#deps
    const payments = config.payments
    return {
      siwe: { domain: new URL(this.#deps.baseUrl()).host, origin: this.origin, sessionTtlMs: config.dashboard.sessionTtlMs },
      networks: Object.entries(config.networks).map(([slug, n]) => ({ slug, chainId: n.chainId, kinds: this.#kindsOf(slug), ...this.#urls(slug) })),
      catalog: catalog.name,
      plans: catalog.plans.map((p) => ({
        id: p.id,
        name: p.name,
        description: p.description,
        priceUsdPerMonth: p.priceUsdPerMonth,
        priceFrom: p.priceFrom ?? false,
        periodMs: p.periodMs,
        limits: p.limits,
        nodes: p.nodes,
        free: isFreePlan(p),
        how: p.nodes.rule === 'dedicated' ? 'request' : isFreePlan(p) ? 'free' : 'pay',
      })),
      payments:
        payments === undefined
          ? null
          : {
              network: payments.network,
              chainId: config.networks[payments.network]!.chainId,
              token: payments.token,
              treasury: payments.treasury,
              confirmations: payments.confirmations,
            },
    }
  }

  nonce(): { nonce: string } {
    return { nonce: this.#nonces.issue(this.#deps.clock.now()) }
  }

  /** Sign in from `ip`: its limits bound the contract signature checks and the accounts it creates. */
  async signIn(input: { message?: unknown; signature?: unknown }, ip: string): Promise<{ token: string; expiresAt: number; accountId: string }> {
    const { config } = this.#deps
    const client = { ip }
    const session = await signIn(
      {
        ...this.#deps,
        host: this.#host,
        nonces: this.#nonces,
        expect: { domain: new URL(this.#deps.baseUrl()).host, origin: this.origin, chainIds: Object.values(config.networks).map((n) => n.chainId) },
        rpcFor: (chainId) => this.#signatureRpcFor(chainId),
        signatureGas: config.dashboard.signatureChecks.gas,
        tokens: this.#tokens,
        guards: {
          contractCheck: () => this.limits.take('contractChecks', client),
          walletCheck: (accountId) => this.limits.takeForAccount('signIn', accountId),
          mayCreateAccount: () => this.limits.check('newAccounts', client),
          createsAccount: () => this.limits.take('newAccounts', client),
        },
        sessionTtlMs: config.dashboard.sessionTtlMs,
      },
      { message: String(input.message ?? ''), signature: String(input.signature ?? '') },
    )
    return { token: session.token, expiresAt: session.expiresAt, accountId: session.accountId }
  }

  async signOut(session: Session): Promise<void> {
    await this.#host.execute(session.accountId, { type: 'SignOut', sessionHash: session.sessionHash, now: this.#deps.clock.now() })
  }

  /** The session of a cookie token, or undefined (none, expired, signed out). */
  async session(token: string | undefined): Promise<Session | undefined> {
    // A token we did not sign, or whose expiry it says passed, needs neither the store nor the log.
    if (token === undefined || token.length > 100 || !this.#tokens.valid(token, this.#deps.clock.now())) return undefined
    const sessionHash = sessionHashOf(token)
    let record = this.#deps.store.session(sessionHash)
    if (record === undefined) {
      // Signed in on another instance a moment ago: its SignedIn may not be projected here yet.
      await this.#deps.projector.catchUp()
      record = this.#deps.store.session(sessionHash)
    }
    if (record === undefined || record.expiresAt <= this.#deps.clock.now()) return undefined
    if (!(await this.#stillOpen(record.accountId, sessionHash))) return undefined
    return { ...record, sessionHash }
  }

  /**
   * Whether the account's own stream still has the session: signed out on another instance a
   * moment ago, it is gone there before our projection applies the SignedOut (which let another
   * instance show the account's key to a signed-out browser). The host keeps the account's state,
   * so this asks the log only whether anything is new (one JetStream call). While the log cannot
   * be reached nobody can sign out either: the projection's word stands.
   */
  async #stillOpen(accountId: string, sessionHash: string): Promise<boolean> {
    try {
      return (await this.#host.load(accountId)).sessions.has(sessionHash)
    } catch (err) {
      if (err instanceof EventLogUnavailable) return true
      throw err
    }
  }

  /** The account as the dashboard shows it (the key in clear: the owner is asking). */
  async me(session: Session): Promise<unknown> {
    const { store, clock, catalog } = this.#deps
    await this.#finishActivations(session.accountId)
    const account = this.#account(session)
    const now = clock.now()
    const plan = account.plan === null ? null : catalog.get(account.plan.planId)
    const activeKey = account.activeKeyId === null ? undefined : store.keyById(account.activeKeyId)
    const grace = store.claim(claimKeys.graceKey(account.accountId))
    const graceKey = grace === undefined || grace.at <= now ? undefined : store.keyById(grace.by)
    return {
      accountId: account.accountId,
      wallet: account.wallet,
      createdAt: account.createdAt,
      plan:
        account.plan === null
          ? null
          : {
              id: account.plan.planId,
              name: plan?.name ?? account.plan.planId,
              startsAt: account.plan.startsAt,
              endsAt: account.plan.endsAt,
              active: account.plan.endsAt === null || account.plan.endsAt > now,
            },
      nodes: account.nodes,
      freePlansUsed: catalog.plans.filter((p) => isFreePlan(p) && store.claim(claimKeys.freePlan(account.accountId, p.id)) !== undefined).map((p) => p.id),
      key:
        activeKey === undefined
          ? null
          : {
              keyId: activeKey.keyId,
              apiKey: this.#cipher.decrypt(activeKey.keyCipher),
              issuedAt: activeKey.issuedAt,
              domains: activeKey.domains ?? [],
              restrictions: activeKey.restrictions ?? {},
              tokenRequired: activeKey.tokenRequired === true,
            },
      jwtKeys: (account.jwtKeys ?? []).map((k) => ({ kid: k.kid, alg: k.alg })),
      previousKey: graceKey === undefined ? null : { keyId: graceKey.keyId, ending: this.#cipher.decrypt(graceKey.keyCipher).slice(-6), worksUntil: grace!.at },
      endpoints: this.#endpointsOf(account),
      invoices: store.invoicesOf(account.accountId, 10).map((i) => this.#invoiceView(i)),
      privateNode: store.privateNode(account.accountId) ?? null,
    }
  }

  /** Take a plan: a free one at once, a paid one as an invoice to pay, the private one as a request. */
  async choosePlan(session: Session, input: { planId?: unknown; nodes?: unknown }): Promise<unknown> {
    const planId = String(input.planId ?? '')
    const plan = this.#deps.catalog.get(planId)
    if (plan === undefined) throw new ApiError('UNKNOWN_PLAN', `There is no plan ${JSON.stringify(planId)}.`)
    if (plan.nodes.rule === 'dedicated') {
      await requestPrivateNode(this.#commandDeps(), { accountId: session.accountId, nodes: input.nodes, available: this.#available })
      return { requested: true }
    }
    if (isFreePlan(plan)) {
      await claimFreePlan(this.#commandDeps(), { accountId: session.accountId, planId, nodes: input.nodes, available: this.#available })
      return { activated: true }
    }
    const invoice = await createInvoice(this.#invoiceDeps(), { accountId: session.accountId, planId, nodes: input.nodes, available: this.#available })
    return { invoice: this.#invoiceView(invoice) }
  }

  /** Check the payment of an invoice (a transaction hash the wallet sent) and activate its plan. */
  async pay(session: Session, invoiceId: string, input: { txHash?: unknown }): Promise<unknown> {
    const { invoice } = await payInvoice(this.#invoiceDeps(), { accountId: session.accountId, invoiceId, txHash: String(input.txHash ?? '') })
    return { invoice: this.#invoiceView(invoice) }
  }

  async regenerate(session: Session, input: { graceSeconds?: unknown }): Promise<unknown> {
    const grace = input.graceSeconds === undefined ? 0 : Number(input.graceSeconds)
    if (!Number.isFinite(grace) || grace < 0 || grace > MAX_GRACE_S)
      throw new ApiError('BAD_GRACE', `The grace period must be between 0 and ${MAX_GRACE_S / 86400} days.`)
    const account = this.#account(session)
    if (account.activeKeyId === null) throw new ApiError('NO_ACTIVE_KEY')
    const out = await regenerateKey(this.#commandDeps(), { accountId: session.accountId, graceMs: Math.round(grace * 1000) })
    return { keyId: out.keyId }
  }

  async setDomains(session: Session, input: { domains?: unknown }): Promise<unknown> {
    return { domains: await restrictDomains(this.#commandDeps(), { accountId: session.accountId, domains: input.domains }) }
  }

  /** The key's restrictions as a whole (the form sends every rule): a rule left out is lifted. */
  async setRestrictions(session: Session, input: unknown): Promise<unknown> {
    return { restrictions: await restrictKey(this.#commandDeps(), { accountId: session.accountId, restrictions: input, replace: true }) }
  }

  /** Register a public key the account's signed tokens are checked with (docs/keys.md, signed tokens). */
  async addJwtKey(session: Session, input: { kid?: unknown; alg?: unknown; publicKey?: unknown }): Promise<unknown> {
    const keys = await registerJwtKey(this.#commandDeps(), { accountId: session.accountId, kid: input.kid, alg: input.alg, publicKey: input.publicKey })
    return { jwtKeys: keys.map((k) => ({ kid: k.kid, alg: k.alg })) }
  }

  async removeJwtKey(session: Session, input: { kid?: unknown }): Promise<unknown> {
    if (typeof input.kid !== 'string') throw new ApiError('BAD_JWT_KEY', 'Give the kid of the key to remove.')
    const keys = await removeJwtKey(this.#commandDeps(), { accountId: session.accountId, kid: input.kid })
    return { jwtKeys: keys.map((k) => ({ kid: k.kid, alg: k.alg })) }
  }

  /** Whether the active key is refused without a signed token. */
  async setTokenRequired(session: Session, input: { required?: unknown }): Promise<unknown> {
    if (typeof input.required !== 'boolean') throw new ApiError('BAD_JWT_KEY', 'Give required: true or false.')
    return { tokenRequired: await requireToken(this.#commandDeps(), { accountId: session.accountId, required: input.required }) }
  }

  /**
   * Calls and their compute units per hour for the last `hours` hours (this one included), by network
   * and node kind; and the calls the account's keys' own rules refused in those hours, by rule.
   * Decided by config, not by whether the store has rows: an instance with usage.project false
   * asks one that projects usage (a store that has some rows may still miss the latest).
   */
  async usage(session: Session, hoursParam: string | null): Promise<AccountUsageView> {
    const hours = usageHours(hoursParam)
    const now = this.#deps.clock.now()
    if (this.#deps.config.usage.project) return accountUsageView(this.#deps.store, session.accountId, hours, now)
    if (this.#deps.askUsage === undefined) throw new UsageUnavailable('not connected')
    return this.#deps.askUsage(session.accountId, hours, now)
  }

  #account(session: Session): AccountRecord {
    const account = this.#deps.store.account(session.accountId)
    if (account === undefined) throw new ApiError('NOT_SIGNED_IN')
    return account
  }

  async #finishActivations(accountId: string): Promise<void> {
    const pending = this.#deps.store.claim(claimKeys.pendingActivation(accountId))
    const invoice = pending === undefined ? undefined : this.#deps.store.invoice(pending.by)
    if (invoice !== undefined && invoice.paid !== null && !invoice.activated) await ensureActivated(this.#invoiceDeps(), accountId, invoice.invoiceId)
  }

  #invoiceView(i: InvoiceRecord): unknown {
    const plan = this.#deps.catalog.get(i.planId)
    const expired = i.paid === null && i.expiresAt !== undefined && i.expiresAt <= this.#deps.clock.now()
    return {
      invoiceId: i.invoiceId,
      planId: i.planId,
      planName: plan?.name ?? i.planId,
      nodes: i.nodes,
      network: i.network,
      chainId: this.#deps.config.networks[i.network]?.chainId ?? null,
      token: i.token,
      treasury: i.treasury,
      amount: i.amount,
      amountUsd: usdOf(i.amount, i.decimals),
      decimals: i.decimals,
      createdAt: i.createdAt,
      expiresAt: i.expiresAt ?? null,
      status: expired ? 'expired' : i.paid === null ? 'unpaid' : i.activated ? 'active' : 'paid',
      txHash: i.paid?.txHash ?? null,
      latePayments: (i.latePayments ?? []).map((p) => ({ txHash: p.txHash, amountUsd: usdOf(p.amount, i.decimals), minedAt: p.minedAt })),
    }
  }

  #endpointsOf(account: AccountRecord): unknown[] {
    const plan = account.plan === null ? undefined : this.#deps.catalog.get(account.plan.planId)
    if (plan === undefined) return []
    const slugs = account.nodes.length > 0 ? [...new Set(account.nodes.map((n) => n.network))] : Object.keys(this.#deps.config.networks)
    return slugs
      .filter((slug) => this.#deps.config.networks[slug] !== undefined)
      .map((slug) => {
        const chosen = account.nodes.filter((n) => n.network === slug).map((n) => n.kind)
        const kinds = chosen.length > 0 ? chosen : this.#kindsOf(slug).filter((k) => k === 'full' || plan.limits.archiveRps !== 0)
        return { network: slug, chainId: this.#deps.config.networks[slug]!.chainId, kinds, ...this.#urls(slug) }
      })
  }

  #urls(slug: string): { http: string; ws: string } {
    const base = this.#deps.baseUrl()
    return { http: `${base}/http/${slug}`, ws: `${base.replace(/^http/, 'ws')}/ws/${slug}` }
  }

  #kindsOf(slug: string): NodeKind[] {
    return this.#available.filter((a) => a.network === slug).map((a) => a.kind)
  }

  #signatureRpcFor(chainId: number): ChainRpc | undefined {
    let rpc = this.#signatureRpcs.get(chainId)
    if (rpc !== undefined) return rpc
    const slug = Object.keys(this.#deps.config.networks).find((s) => this.#deps.config.networks[s]!.chainId === chainId)
    const pool = slug === undefined ? undefined : this.#deps.upstreams.pool(slug)
    if (pool === undefined) return undefined
    // One budget for the whole call: a check slow enough to time out is not tried again on another node.
    const { timeoutMs } = this.#deps.config.dashboard.signatureChecks
    rpc = poolRpc(pool, { timeoutMs, deadlineMs: timeoutMs })
    this.#signatureRpcs.set(chainId, rpc)
    return rpc
  }

  #paymentRpc(): ChainRpc | undefined {
    const payments = this.#deps.config.payments
    const pool = payments === undefined ? undefined : this.#deps.upstreams.pool(payments.network)
    return pool === undefined ? undefined : poolRpc(pool, { timeoutMs: this.#timeoutMs })
  }

  #commandDeps(): AccountCommandDeps {
    const { log, store, catalog, clock, projector } = this.#deps
    return { log, store, catalog, clock, projector, cipher: this.#cipher, host: this.#host }
  }

  #invoiceDeps(): InvoiceDeps {
    return { ...this.#commandDeps(), payments: this.#deps.config.payments, rpc: this.#paymentRpc(), decimals: this.#decimals }
  }
}

/** The network and node kinds the config offers (what an account may choose). */
function availableNodes(config: Config): Entitlement[] {
  return Object.entries(config.networks).flatMap(([network, n]) =>
    (['full', 'archive'] as const).filter((kind) => n.upstreams.some((u) => u.kind === kind)).map((kind) => ({ network, kind })),
  )
}
