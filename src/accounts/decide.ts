import { makeEvent } from '../events/make-event.js'
import type { Entitlement, InvoiceCreated, TokenTransfer, TollgateEvent } from '../events/types.js'
import type { NodeKind } from '../core/node-kind.js'
import type { Plan, PlanCatalog } from '../plans/catalog.js'
import { selectionProblem } from '../plans/entitlements.js'
import { PaymentError } from './errors.js'
import { listsOf, unrestricted, type KeyRestrictions, type RestrictionType } from '../keys/key-restrictions.js'
import { refuseOtherChain } from './contract-chain.js'
import { SiweError } from './errors.js'
import type { SignerKind } from './wallet.js'
import { transferKey, type AccountState, type InvoiceState } from './account-state.js'
import { MAX_JWT_KEYS, type JwtPublicKey } from '../keys/jwt-keys.js'
import {
  BadJwtKeyRegistrationError,
  BadNodesError,
  FreePlanUsedError,
  NoActiveKeyError,
  TooManyRegenerationsError,
  UnknownAccountError,
  UnknownPlanError,
} from './errors.js'

/** A key made outside the decider (randomness and encryption are the host's): used or not. */
export interface NewKey {
  keyId: string
  keyHash: string
  keyCipher: string
}

const HOUR_MS = 3_600_000

/** What an account can be asked to do. Every command carries its time; none reads a clock. */
export type AccountCommand =
  /** The command line's `accounts create`: the account if new, a plan from now, its nodes, a key; nothing for an open account (see isOpen). */
  | { type: 'OpenAccount'; wallet: string; plan: Plan; nodes: Entitlement[]; networks: readonly string[] | undefined; key: NewKey; now: number }
  | { type: 'RegenerateKey'; key: NewKey; graceMs: number; now: number }
  | { type: 'SelectNodes'; nodes: Entitlement[]; networks: readonly string[] | undefined; now: number }
  | { type: 'ClaimFreePlan'; plan: Plan; nodes: Entitlement[]; key: NewKey; attempt: string; now: number }
  | { type: 'CreateInvoice'; invoice: NewInvoice; now: number }
  | { type: 'ConfirmPayment'; invoiceId: string; transfer: VerifiedTransfer; attempt: string; key: NewKey; now: number }
  /** Activate a paid invoice whose activation did not happen (a crash between the two). */
  | { type: 'ActivatePaidInvoice'; invoiceId: string; key: NewKey; now: number }
  /** `signer`: who vouched for the signature, on `chainId` (a contract's word holds on its own chain only). */
  | { type: 'SignIn'; wallet: string; nonce: string; sessionHash: string; expiresAt: number; chainId: number; signer: SignerKind; now: number }
  | { type: 'SignOut'; sessionHash: string; now: number }
  | { type: 'RestrictDomains'; domains: string[]; now: number }
  /** The types given replace the active key's lists of those types (an empty list lifts it); the others are kept. */
  | { type: 'RestrictKey'; set: KeyRestrictions; types: readonly RestrictionType[]; now: number }
  | { type: 'RegisterJwtKey'; key: JwtPublicKey; now: number }
  | { type: 'RemoveJwtKey'; kid: string; now: number }
  /** Whether the active key is refused without a signed token. */
  | { type: 'RequireToken'; required: boolean; now: number }
  | { type: 'RequestPrivateNode'; nodes: Entitlement[]; now: number }
  | { type: 'AttachDedicatedNode'; network: string; kind: NodeKind; url: string; ws: string | null; now: number }

/** An invoice as the host prepared it (its id and the token's decimals come from outside). */
export type NewInvoice = Omit<InvoiceCreated, 'type' | 'version' | 'id' | 'time' | 'accountId'>

/** A transfer checked on chain by the host (verifyTransfer), with its block's timestamp. */
export type VerifiedTransfer = TokenTransfer & { minedAt: number }

/** What the deciders read besides the state: the plan catalog. */
export interface DecideContext {
  catalog: PlanCatalog
}

/**
 * Bounds of key rotation. Every live key of an account shares one budget (the account's actor),
 * so these bound what an account keeps alive, not its rate: regenerations per hour, and keys live
 * at once (the active one and those in a grace period). Past the second, the oldest key in its
 * grace period ends at once.
 */
const KEY_ROTATION = Object.freeze({ regenerationsPerHour: 10, liveKeys: 3 })

/**
 * The business rules of an account, as a decider: given the account's state (folded from its own
 * stream) and a command, the events to append, or an error saying why not. Pure: no clock, no
 * randomness, no I/O. One rule per case; the host appends with the version the state was folded
 * at, so a command decided on a stale state is refused by the log and decided again.
 * @example
 * const events = decide({ type: 'SignOut', sessionHash, now }, state, { catalog })
 */
export function decide(command: AccountCommand, state: AccountState, ctx: DecideContext): TollgateEvent[] {
  const { accountId } = state
  const { now } = command
  switch (command.type) {
    case 'OpenAccount': {
      const plan = command.plan
      // Opening an account that is open changes nothing, whatever it is asked (`accounts create`
      // run again: before, it revoked the key and restarted the plan period); a new key is
      // RegenerateKey. Only a Private Node its owner asked for is activated, the key kept.
      const privateAwaited = plan.nodes.rule === 'dedicated' && state.privateNodeRequested && state.plan?.planId !== plan.id
      if (isOpen(state, now) && !privateAwaited) return []
      const problem = selectionProblem(plan, command.nodes, command.networks ?? command.nodes.map((n) => n.network))
      if (problem !== undefined) throw new BadNodesError(problem)
      if (isOpen(state, now)) return activation(state, plan, command.nodes, now, now, command.key)
      const events: TollgateEvent[] = []
      if (!state.exists) events.push(makeEvent({ type: 'AccountCreated', accountId, wallet: command.wallet }, now))
      events.push(
        makeEvent({ type: 'PlanActivated', accountId, planId: plan.id, startsAt: now, endsAt: plan.periodMs === null ? null : now + plan.periodMs }, now),
        makeEvent({ type: 'NodesSelected', accountId, nodes: command.nodes }, now),
        issue(accountId, command.key, now),
      )
      if (state.activeKeyId !== null) events.push(revoke(accountId, state.activeKeyId, now, now))
      return events
    }
    case 'RegenerateKey': {
      requireAccount(state)
      const hourAgo = now - HOUR_MS
      const recent = [...state.keys.values()].filter((k) => k.issuedAt > hourAgo && k.keyId !== state.firstKeyId).map((k) => k.issuedAt)
      if (recent.length >= KEY_ROTATION.regenerationsPerHour)
        throw new TooManyRegenerationsError(KEY_ROTATION.regenerationsPerHour, Math.min(...recent) + HOUR_MS - now)
      // The new key first: an account must never be left without an active key between the two.
      const events: TollgateEvent[] = [issue(accountId, command.key, now)]
      // Keys still in a grace period, oldest first: with the new one and the active one, at most liveKeys.
      const graced = [...state.keys.values()]
        .filter((k) => k.keyId !== state.activeKeyId && k.revokedAt !== null && k.revokedAt > now)
        .sort((a, b) => a.issuedAt - b.issuedAt)
      for (const k of graced.slice(0, Math.max(0, graced.length - (KEY_ROTATION.liveKeys - 2)))) events.push(revoke(accountId, k.keyId, now, now))
      // A new key keeps the old one's domain allowlist: regenerating after a leak must not lift it.
      const old = state.activeKeyId === null ? undefined : state.keys.get(state.activeKeyId)
      if (old !== undefined && old.domains.length > 0) {
        events.push(makeEvent({ type: 'DomainsRestricted', accountId, keyId: command.key.keyId, domains: [...old.domains] }, now))
      }
      // And its restrictions: a regenerated key that could call every method would undo them.
      if (old !== undefined && !unrestricted(old.restrictions)) {
        events.push(makeEvent({ type: 'KeyRestricted', accountId, keyId: command.key.keyId, ...listsOf(old.restrictions) }, now))
      }
      // And its need of a token: a regenerated key usable alone would undo it.
      if (old?.tokenRequired === true) events.push(makeEvent({ type: 'KeyTokenRequired', accountId, keyId: command.key.keyId, required: true }, now))
      if (old !== undefined) events.push(revoke(accountId, old.keyId, now + command.graceMs, now))
      return events
    }
    case 'SelectNodes': {
      requireAccount(state)
      const plan = state.plan === null ? undefined : ctx.catalog.get(state.plan.planId)
      if (plan === undefined) throw new BadNodesError('the account has no active plan to choose nodes for')
      const problem = selectionProblem(plan, command.nodes, command.networks ?? command.nodes.map((n) => n.network))
      if (problem !== undefined) throw new BadNodesError(problem)
      return [makeEvent({ type: 'NodesSelected', accountId, nodes: command.nodes }, now)]
    }
    case 'ClaimFreePlan': {
      requireAccount(state)
      if (state.freePlans.has(command.plan.id)) throw new FreePlanUsedError(command.plan.name)
      return [
        makeEvent({ type: 'FreePlanClaimed', accountId, planId: command.plan.id, attempt: command.attempt }, now),
        ...activation(state, command.plan, command.nodes, now, now, command.key),
      ]
    }
    case 'CreateInvoice': {
      requireAccount(state)
      return [makeEvent({ type: 'InvoiceCreated', accountId, ...command.invoice }, now)]
    }
    case 'ConfirmPayment': {
      requireAccount(state)
      const invoice = state.invoices.get(command.invoiceId)
      if (invoice === undefined) throw new PaymentError('UNKNOWN_INVOICE', 'there is no such invoice for this account')
      const t = command.transfer
      if (invoice.paid !== null) {
        // Paid by this transfer already (a retry, or an append cut after its first event): only
        // what is missing, the activation, unless a later plan overtook it.
        if (invoice.paid.txHash === t.txHash.toLowerCase() && invoice.paid.logIndex === t.logIndex) return activatePaid(state, ctx, invoice, now, command.key)
        throw new PaymentError('INVOICE_PAID', 'this invoice is already paid (by another transaction); nothing more is due')
      }
      if (state.transfers.has(transferKey(t.network, t.txHash, t.logIndex)))
        throw new PaymentError('ALREADY_USED', 'this payment was already used for another invoice')
      if (minedBeforeInvoice(invoice, t.minedAt) && !latePayment(state, transferKey(t.network, t.txHash, t.logIndex))) {
        throw new PaymentError(
          'MINED_BEFORE_INVOICE',
          `this payment was mined at ${isoTime(t.minedAt)}, before the invoice existed (${isoTime(invoice.createdAt)}), so it was not made for it; pay the invoice with a new transfer`,
          { minedAt: t.minedAt, invoiceCreatedAt: invoice.createdAt },
        )
      }
      if (minedAfterExpiry(invoice, t.minedAt)) {
        // The terms (price, token, treasury) hold until the invoice expires, and may change after:
        // a transfer mined later does not pay it. It is recorded, once per invoice, so that the
        // money is not lost from sight; it is not marked used, so it can pay a fresh invoice.
        if (invoice.late.has(transferKey(t.network, t.txHash, t.logIndex))) return []
        return [
          makeEvent(
            { type: 'PaymentUnmatched', accountId, invoiceId: invoice.invoiceId, reason: 'invoice-expired', invoiceExpiresAt: invoice.expiresAt!, ...t },
            now,
          ),
        ]
      }
      const paid = makeEvent({ type: 'PaymentConfirmed', accountId, invoiceId: invoice.invoiceId, ...t, txHash: t.txHash, attempt: command.attempt }, now)
      return [paid, ...activation(state, planOf(ctx, invoice.planId), invoice.nodes, now, now, command.key)]
    }
    case 'ActivatePaidInvoice': {
      const invoice = state.invoices.get(command.invoiceId)
      return invoice === undefined ? [] : activatePaid(state, ctx, invoice, now, command.key)
    }
    case 'SignIn': {
      if (state.nonces.has(command.nonce)) throw new SiweError('NONCE_USED', 'this sign-in message was already used; sign in again')
      if (command.signer === 'contract') refuseOtherChain(state.contractChainId, command.chainId)
      const events: TollgateEvent[] = []
      if (!state.exists) events.push(makeEvent({ type: 'AccountCreated', accountId, wallet: command.wallet }, now))
      events.push(
        makeEvent(
          {
            type: 'SignedIn',
            accountId,
            wallet: command.wallet,
            nonce: command.nonce,
            sessionHash: command.sessionHash,
            expiresAt: command.expiresAt,
            chainId: command.chainId,
            signer: command.signer,
          },
          now,
        ),
      )
      return events
    }
    case 'SignOut':
      return state.sessions.has(command.sessionHash) ? [makeEvent({ type: 'SignedOut', accountId, sessionHash: command.sessionHash }, now)] : []
    case 'RestrictDomains':
      requireAccount(state)
      if (state.activeKeyId === null) throw new NoActiveKeyError(accountId)
      return [makeEvent({ type: 'DomainsRestricted', accountId, keyId: state.activeKeyId, domains: command.domains }, now)]
    case 'RestrictKey': {
      requireAccount(state)
      if (state.activeKeyId === null) throw new NoActiveKeyError(accountId)
      const current = state.keys.get(state.activeKeyId)?.restrictions ?? {}
      const next: KeyRestrictions = { ...current }
      for (const type of command.types) {
        const list = command.set[type]
        if (list === undefined || list.length === 0) delete next[type]
        else next[type] = [...list]
      }
      // Allowed and denied methods are one rule: setting one of them replaces the other.
      if (command.types.includes('methods') && next.methods !== undefined) delete next.deniedMethods
      if (command.types.includes('deniedMethods') && next.deniedMethods !== undefined) delete next.methods
      return [makeEvent({ type: 'KeyRestricted', accountId, keyId: state.activeKeyId, ...listsOf(next) }, now)]
    }
    case 'RegisterJwtKey': {
      requireAccount(state)
      const { kid, alg, publicKey } = command.key
      if (state.jwtKeys.some((k) => k.kid === kid))
        throw new BadJwtKeyRegistrationError(`kid ${JSON.stringify(kid)} is already registered; remove it first, or use another kid`)
      if (state.jwtKeys.length >= MAX_JWT_KEYS) {
        throw new BadJwtKeyRegistrationError(
          `the account has ${state.jwtKeys.length} keys (${state.jwtKeys.map((k) => k.kid).join(', ')}), at most ${MAX_JWT_KEYS}; remove one first`,
        )
      }
      return [makeEvent({ type: 'JwtKeyRegistered', accountId, kid, alg, publicKey }, now)]
    }
    case 'RemoveJwtKey': {
      requireAccount(state)
      if (!state.jwtKeys.some((k) => k.kid === command.kid)) {
        throw new BadJwtKeyRegistrationError(
          `kid ${JSON.stringify(command.kid)} is not registered (the account has ${state.jwtKeys.map((k) => k.kid).join(', ') || 'none'})`,
        )
      }
      return [makeEvent({ type: 'JwtKeyRemoved', accountId, kid: command.kid }, now)]
    }
    case 'RequireToken': {
      requireAccount(state)
      if (state.activeKeyId === null) throw new NoActiveKeyError(accountId)
      // A key that needs a token no registered key can sign would refuse every call: said now, not at the first call.
      if (command.required && state.jwtKeys.length === 0)
        throw new BadJwtKeyRegistrationError('no public key is registered to sign tokens with; register one first')
      if ((state.keys.get(state.activeKeyId)?.tokenRequired ?? false) === command.required) return []
      return [makeEvent({ type: 'KeyTokenRequired', accountId, keyId: state.activeKeyId, required: command.required }, now)]
    }
    case 'RequestPrivateNode':
      requireAccount(state)
      return [makeEvent({ type: 'PrivateNodeRequested', accountId, nodes: command.nodes }, now)]
    case 'AttachDedicatedNode': {
      requireAccount(state)
      const { network, kind, url, ws } = command
      return [makeEvent({ type: 'DedicatedNodeAttached', accountId, network, kind, url, ws }, now)]
    }
    default:
      return unhandled(command)
  }
}

/**
 * The events that activate `plan` from `startsAt`: PlanActivated, NodesSelected and, when the
 * account has no active key, KeyIssued. An account that has a key keeps it: a renewal or a plan
 * change must not break the apps that use it. Renewing the plan that is still running adds a
 * period to its end (paying early loses nothing).
 */
function activation(state: AccountState, plan: Plan, nodes: Entitlement[], startsAt: number, now: number, key: NewKey): TollgateEvent[] {
  const { accountId } = state
  const current = state.plan
  const renewsFrom = current !== null && current.planId === plan.id && current.endsAt !== null && current.endsAt > startsAt ? current.endsAt : startsAt
  const events: TollgateEvent[] = [
    makeEvent({ type: 'PlanActivated', accountId, planId: plan.id, startsAt, endsAt: plan.periodMs === null ? null : renewsFrom + plan.periodMs }, now),
    makeEvent({ type: 'NodesSelected', accountId, nodes }, now),
  ]
  if (state.activeKeyId === null) events.push(issue(accountId, key, now))
  return events
}

/** An account with a key, or a plan that has not ended: one the command line opened, or its owner took a plan. */
function isOpen(state: AccountState, now: number): boolean {
  return state.exists && (state.activeKeyId !== null || (state.plan !== null && (state.plan.endsAt === null || state.plan.endsAt > now)))
}

/** The activation a paid invoice still lacks, if any. */
function activatePaid(state: AccountState, ctx: DecideContext, invoice: InvoiceState, now: number, key: NewKey): TollgateEvent[] {
  if (invoice.paid === null || invoice.activated) return []
  // A plan activated since it was paid overtook it: activating it now would undo a later choice.
  if (state.plan !== null && state.plan.startsAt > invoice.paid.paidAt) return []
  return activation(state, planOf(ctx, invoice.planId), invoice.nodes, invoice.paid.paidAt, now, key)
}

/**
 * A transfer mined (by its block's timestamp) after the invoice expired does not pay it. The block's
 * time, not the time the payment is checked: a payment sent in time but confirmed or checked later
 * (a closed page, a slow chain) still counts.
 */
export function minedAfterExpiry(invoice: InvoiceState, minedAt: number): boolean {
  return invoice.expiresAt !== null && minedAt > invoice.expiresAt
}

/**
 * How far before an invoice a transfer's block may be and still pay it: a block's time is the
 * chain's clock in whole seconds (an Ethereum block carries its slot's start, up to 12 s before
 * the transaction was sent), ours may differ by a few seconds.
 */
const MINED_BEFORE_SLACK_MS = 30_000

/**
 * A transfer mined before its invoice existed was not made for it: whatever it paid for (nothing
 * we know of, another purpose of the treasury's address, older terms), it must not pay an invoice
 * made later, which would let a wallet's old transfers buy plans at any later price or terms.
 */
function minedBeforeInvoice(invoice: InvoiceState, minedAt: number): boolean {
  return minedAt < invoice.createdAt - MINED_BEFORE_SLACK_MS
}

/** A transfer recorded as mined too late for an earlier invoice of the account (PaymentUnmatched): it may pay a fresh one. */
function latePayment(state: AccountState, transfer: string): boolean {
  for (const invoice of state.invoices.values()) if (invoice.late.has(transfer)) return true
  return false
}

const isoTime = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z')

function issue(accountId: string, key: NewKey, now: number): TollgateEvent {
  return makeEvent({ type: 'KeyIssued', accountId, keyId: key.keyId, keyHash: key.keyHash, keyCipher: key.keyCipher }, now)
}

function revoke(accountId: string, keyId: string, effectiveAt: number, now: number): TollgateEvent {
  return makeEvent({ type: 'KeyRevoked', accountId, keyId, reason: 'regenerated', effectiveAt }, now)
}

function requireAccount(state: AccountState): void {
  if (!state.exists) throw new UnknownAccountError(state.accountId)
}

function planOf(ctx: DecideContext, planId: string): Plan {
  const plan = ctx.catalog.get(planId)
  if (plan === undefined)
    throw new UnknownPlanError(
      planId,
      ctx.catalog.plans.map((p) => p.id),
    )
  return plan
}

function unhandled(command: never): never {
  throw new Error(`no rule for command ${(command as AccountCommand).type}`)
}
