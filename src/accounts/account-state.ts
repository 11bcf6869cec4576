import type { Entitlement, PlanEnded, TollgateEvent } from '../events/types.js'
import { paymentOf, type InvoicePayment } from '../store/records.js'
import { sessionsEndedBySignIn } from './sessions.js'
import { restrictionsOf, type KeyRestrictions } from '../keys/key-restrictions.js'
import type { JwtPublicKey } from '../keys/jwt-keys.js'

/**
 * An account as its own stream says it is: what the deciders need to decide a command, folded
 * from the account's events (`evolve`), never read from a projection. Two commands that race are
 * told apart by the log (an append carries the version this state was folded at).
 */
export interface AccountState {
  /** AccountCreated was seen. */
  exists: boolean
  accountId: string
  /** Lower-case 0x address; '' before AccountCreated. */
  wallet: string
  plan: { planId: string; startsAt: number; endsAt: number | null } | null
  nodes: Entitlement[]
  activeKeyId: string | null
  /** The account's first key: issued with its plan, not a regeneration. */
  firstKeyId: string | null
  /** Every key of the account: revoked ones keep their revocation time. */
  keys: Map<string, KeyState>
  /** Free plans taken (once per account, that is per wallet). */
  freePlans: Set<string>
  invoices: Map<string, InvoiceState>
  /** `network|txHash|logIndex` of the transfers that paid an invoice: one transfer pays one. */
  transfers: Set<string>
  /** Nonces of the sign-ins of the last NONCE_MEMORY_MS (an older nonce is expired anyway). */
  nonces: Map<string, number>
  /** Live sessions by hash, with their expiry (at most MAX_SESSIONS_PER_ACCOUNT after a sign-in). */
  sessions: Map<string, number>
  /** Its owner asked for a Private Node (the operator activates it with `accounts create --plan private`). */
  privateNodeRequested: boolean
  /** The chain of the account's first contract-wallet sign-in: its contract's signatures count there only. */
  contractChainId: number | null
  /** Public keys its own tokens may be signed with (JwtKeyRegistered), at most MAX_JWT_KEYS. */
  jwtKeys: JwtPublicKey[]
  /** Time of the last event folded: the state's own clock for what it forgets. */
  lastTime: number
}

export interface KeyState {
  keyId: string
  issuedAt: number
  /** From when it stops working; null while it works. */
  revokedAt: number | null
  domains: string[]
  /** Its restrictions besides domains (KeyRestricted); {} none. */
  restrictions: KeyRestrictions
  /** Refused without a signed token (KeyTokenRequired). */
  tokenRequired: boolean
}

export interface InvoiceState {
  invoiceId: string
  planId: string
  nodes: Entitlement[]
  createdAt: number
  network: string
  token: string
  treasury: string
  amount: string
  decimals: number
  /** Until when its terms hold (a transfer mined later does not pay it); null: no expiry (a version 1 invoice). */
  expiresAt: number | null
  paid: InvoicePayment | null
  /** Its plan was activated (PlanActivated starting when it was paid). */
  activated: boolean
  /** transferKey() of the transfers offered for it after it expired (PaymentUnmatched). */
  late: Set<string>
}

/**
 * How long a sign-in's nonce is remembered: longer than a nonce lives (5 minutes, see
 * siwe/nonces.ts), so a nonce can never be used twice, and the state does not grow with every
 * sign-in the account ever made.
 */
export const NONCE_MEMORY_MS = 15 * 60_000

export function initialAccountState(accountId: string): AccountState {
  return {
    exists: false,
    accountId,
    wallet: '',
    plan: null,
    nodes: [],
    activeKeyId: null,
    firstKeyId: null,
    keys: new Map(),
    freePlans: new Set(),
    invoices: new Map(),
    transfers: new Set(),
    nonces: new Map(),
    sessions: new Map(),
    privateNodeRequested: false,
    contractChainId: null,
    jwtKeys: [],
    lastTime: 0,
  }
}

export const transferKey = (network: string, txHash: string, logIndex: number): string => `${network}|${txHash.toLowerCase()}|${logIndex}`

/**
 * Fold one event of the account's stream into its state (mutating it: the state is the
 * decider's own, built afresh for each command). Events of other accounts and of other streams
 * change nothing.
 */
export function evolve(state: AccountState, event: TollgateEvent): AccountState {
  if (!('accountId' in event) || event.accountId !== state.accountId) return state
  state.lastTime = Math.max(state.lastTime, event.time)
  switch (event.type) {
    case 'AccountCreated':
      state.exists = true
      state.wallet = event.wallet
      return state
    case 'PlanActivated':
      state.plan = { planId: event.planId, startsAt: event.startsAt, endsAt: event.endsAt }
      for (const invoice of state.invoices.values()) {
        if (invoice.paid !== null && !invoice.activated && invoice.planId === event.planId && invoice.paid.paidAt === event.startsAt) invoice.activated = true
      }
      return state
    case 'PlanEnded':
      if (endsPeriod(event, state.plan)) state.plan = null
      return state
    case 'NodesSelected':
      state.nodes = event.nodes.map((n) => ({ network: n.network, kind: n.kind }))
      return state
    case 'KeyIssued':
      state.keys.set(event.keyId, { keyId: event.keyId, issuedAt: event.time, revokedAt: null, domains: [], restrictions: {}, tokenRequired: false })
      state.firstKeyId ??= event.keyId
      state.activeKeyId = event.keyId
      return state
    case 'KeyRevoked': {
      const key = state.keys.get(event.keyId)
      // The earliest revocation wins (a "revoke now" after a grace period ends it).
      if (key) key.revokedAt = key.revokedAt === null ? event.effectiveAt : Math.min(key.revokedAt, event.effectiveAt)
      if (state.activeKeyId === event.keyId) state.activeKeyId = null
      return state
    }
    case 'DomainsRestricted': {
      const key = state.keys.get(event.keyId)
      if (key) key.domains = [...event.domains]
      return state
    }
    case 'KeyRestricted': {
      const key = state.keys.get(event.keyId)
      if (key) key.restrictions = restrictionsOf(event)
      return state
    }
    case 'JwtKeyRegistered':
      state.jwtKeys = [...state.jwtKeys.filter((k) => k.kid !== event.kid), { kid: event.kid, alg: event.alg, publicKey: event.publicKey }]
      return state
    case 'JwtKeyRemoved':
      state.jwtKeys = state.jwtKeys.filter((k) => k.kid !== event.kid)
      return state
    case 'KeyTokenRequired': {
      const key = state.keys.get(event.keyId)
      if (key) key.tokenRequired = event.required
      return state
    }
    case 'FreePlanClaimed':
      state.freePlans.add(event.planId)
      return state
    case 'InvoiceCreated':
      state.invoices.set(event.invoiceId, {
        invoiceId: event.invoiceId,
        planId: event.planId,
        nodes: event.nodes.map((n) => ({ network: n.network, kind: n.kind })),
        createdAt: event.time,
        network: event.network,
        token: event.token,
        treasury: event.treasury,
        amount: event.amount,
        decimals: event.decimals,
        expiresAt: event.expiresAt ?? null,
        paid: null,
        activated: false,
        late: new Set(),
      })
      return state
    case 'PaymentConfirmed': {
      const invoice = state.invoices.get(event.invoiceId)
      const transfer = transferKey(event.network, event.txHash, event.logIndex)
      if (invoice === undefined || invoice.paid !== null || state.transfers.has(transfer)) return state
      state.transfers.add(transfer)
      invoice.paid = paymentOf(event)
      return state
    }
    case 'PaymentUnmatched':
      state.invoices.get(event.invoiceId)?.late.add(transferKey(event.network, event.txHash, event.logIndex))
      return state
    case 'SignedIn':
      if (event.signer === 'contract' && event.chainId !== undefined) state.contractChainId ??= event.chainId
      state.nonces.set(event.nonce, event.time)
      state.sessions.set(event.sessionHash, event.expiresAt)
      for (const [nonce, at] of state.nonces) if (at < event.time - NONCE_MEMORY_MS) state.nonces.delete(nonce)
      // The same sessions the billing projection drops for this event.
      for (const hash of sessionsEndedBySignIn(
        [...state.sessions].map(([sessionHash, expiresAt]) => ({ sessionHash, expiresAt })),
        event.time,
      ))
        state.sessions.delete(hash)
      return state
    case 'SignedOut':
      state.sessions.delete(event.sessionHash)
      return state
    case 'PrivateNodeRequested':
      state.privateNodeRequested = true
      return state
    case 'DedicatedNodeAttached':
    case 'RateLimited':
    case 'UsageRecorded':
    case 'NotificationsRecorded':
    case 'WsLimited':
    case 'WsCooldownStarted':
    case 'WsPenaltyImposed':
    case 'KeyRuleRefused':
      return state
    default:
      return unhandled(event)
  }
}

/**
 * Whether a PlanEnded ends the period an account has now: the same plan and, from version 2 on,
 * the same start. A late PlanEnded of an expired period must not end the renewal that followed it.
 */
export function endsPeriod(event: PlanEnded, plan: { planId: string; startsAt: number } | null): boolean {
  return plan !== null && plan.planId === event.planId && (event.startsAt === undefined || event.startsAt === plan.startsAt)
}

/** Fold a whole stream. */
export function foldAccount(accountId: string, events: Iterable<TollgateEvent>): AccountState {
  let state = initialAccountState(accountId)
  for (const event of events) state = evolve(state, event)
  return state
}

function unhandled(event: never): never {
  throw new Error(`the account state does not handle ${(event as TollgateEvent).type}`)
}
