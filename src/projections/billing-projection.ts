import type { TollgateEvent } from '../events/types.js'
import type { StateWriter } from '../store/state-writer.js'
import { paymentOf } from '../store/records.js'
import { sessionsEndedBySignIn } from '../accounts/sessions.js'
import type { Projection } from '../store/projection.js'

/** Claim keys of ClaimRecord: one place that spells them, for the projection and the commands. */
export const claimKeys = {
  freePlan: (accountId: string, planId: string) => `free|${accountId}|${planId}`,
  /** The paid invoice of an account whose plan is not activated yet. */
  pendingActivation: (accountId: string) => `activate|${accountId}`,
  /** The account's last key revoked with a grace period (by: keyId, at: when it stops). */
  graceKey: (accountId: string) => `grace|${accountId}`,
}

/**
 * A read model of sessions, invoices with their payment, free plans taken, Private Node requests
 * and markers the dashboard shows (the paid invoice whose plan is not activated yet, a previous
 * key still in its grace period). It decides nothing: the account deciders (accounts/decide.ts)
 * refuse a used nonce, a used transfer or a second free plan before anything is appended, so it
 * can be dropped and rebuilt from the log at will. (Logs of older versions, whose projection
 * decided these, hold no event such a rule would have refused.)
 */
export const billingProjection: Projection = {
  name: 'billing',
  handles: new Set([
    'DedicatedNodeAttached',
    'FreePlanClaimed',
    'InvoiceCreated',
    'KeyRevoked',
    'PaymentConfirmed',
    'PaymentUnmatched',
    'PlanActivated',
    'PrivateNodeRequested',
    'SignedIn',
    'SignedOut',
  ]),
  apply(event: TollgateEvent, writer: StateWriter): void {
    switch (event.type) {
      case 'SignedIn':
        writer.putSession(event.sessionHash, { accountId: event.accountId, wallet: event.wallet, expiresAt: event.expiresAt })
        // Sessions are pruned as the account signs in again (by the event's time: a replay prunes the same).
        for (const hash of sessionsEndedBySignIn(writer.sessionsOf(event.accountId), event.time)) writer.removeSession(hash)
        return
      case 'SignedOut': {
        const session = writer.session(event.sessionHash)
        if (session?.accountId === event.accountId) writer.removeSession(event.sessionHash)
        return
      }
      case 'FreePlanClaimed':
        writer.putClaim(claimKeys.freePlan(event.accountId, event.planId), { by: event.attempt, at: event.time })
        return
      case 'InvoiceCreated':
        if (writer.invoice(event.invoiceId) !== undefined) return
        writer.putInvoice({
          invoiceId: event.invoiceId,
          accountId: event.accountId,
          planId: event.planId,
          nodes: event.nodes.map((n) => ({ network: n.network, kind: n.kind })),
          network: event.network,
          token: event.token,
          treasury: event.treasury,
          amount: event.amount,
          decimals: event.decimals,
          priceUsd: event.priceUsd,
          createdAt: event.time,
          ...(event.expiresAt === undefined ? {} : { expiresAt: event.expiresAt }),
          paid: null,
          activated: false,
        })
        return
      case 'PaymentConfirmed': {
        const invoice = writer.invoice(event.invoiceId)
        if (invoice === undefined || invoice.accountId !== event.accountId || invoice.paid !== null) return
        writer.putInvoice({ ...invoice, paid: paymentOf(event) })
        writer.putClaim(claimKeys.pendingActivation(event.accountId), { by: event.invoiceId, at: event.time })
        return
      }
      case 'PaymentUnmatched': {
        const invoice = writer.invoice(event.invoiceId)
        if (invoice === undefined || invoice.accountId !== event.accountId) return
        const late = { txHash: event.txHash.toLowerCase(), logIndex: event.logIndex, amount: event.amount, minedAt: event.minedAt }
        const others = (invoice.latePayments ?? []).filter((p) => !(p.txHash === late.txHash && p.logIndex === late.logIndex))
        writer.putInvoice({ ...invoice, latePayments: [...others, late] })
        return
      }
      case 'PlanActivated': {
        // The activation of a paid invoice: its plan, starting when it was paid.
        const pending = writer.claim(claimKeys.pendingActivation(event.accountId))
        const invoice = pending === undefined ? undefined : writer.invoice(pending.by)
        if (invoice?.paid && invoice.planId === event.planId && invoice.paid.paidAt === event.startsAt) {
          writer.putInvoice({ ...invoice, activated: true })
          writer.removeClaim(claimKeys.pendingActivation(event.accountId))
        }
        return
      }
      case 'PrivateNodeRequested': {
        const record = writer.privateNode(event.accountId) ?? { accountId: event.accountId, requestedAt: null, requested: [], attached: [] }
        writer.putPrivateNode({ ...record, requestedAt: event.time, requested: event.nodes.map((n) => ({ network: n.network, kind: n.kind })) })
        return
      }
      case 'DedicatedNodeAttached': {
        const record = writer.privateNode(event.accountId) ?? { accountId: event.accountId, requestedAt: null, requested: [], attached: [] }
        const others = record.attached.filter((n) => !(n.network === event.network && n.kind === event.kind && n.url === event.url))
        writer.putPrivateNode({
          ...record,
          attached: [...others, { network: event.network, kind: event.kind, url: event.url, ws: event.ws, attachedAt: event.time }],
        })
        return
      }
      case 'KeyRevoked':
        // Shown in the dashboard: "your previous key works until …".
        if (event.effectiveAt > event.time) writer.putClaim(claimKeys.graceKey(event.accountId), { by: event.keyId, at: event.effectiveAt })
        else if (writer.claim(claimKeys.graceKey(event.accountId))?.by === event.keyId) writer.removeClaim(claimKeys.graceKey(event.accountId))
        return
      default:
        return
    }
  },
}
