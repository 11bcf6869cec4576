import type { TollgateEvent } from '../events/types.js'
import type { StateWriter } from '../store/state-writer.js'
import { unhandledEvent, type Projection } from './projection.js'

/** Claim keys of ClaimRecord: one place that spells them, for the projection and the commands. */
export const claimKeys = {
  nonce: (nonce: string) => `nonce|${nonce}`,
  freePlan: (accountId: string, planId: string) => `free|${accountId}|${planId}`,
  payment: (network: string, txHash: string, logIndex: number) => `pay|${network}|${txHash.toLowerCase()}|${logIndex}`,
  /** The paid invoice of an account whose plan is not activated yet. */
  pendingActivation: (accountId: string) => `activate|${accountId}`,
  /** The account's last key revoked with a grace period (by: keyId, at: when it stops). */
  graceKey: (accountId: string) => `grace|${accountId}`,
}

/**
 * Keeps sessions, claims (first of competing facts wins), invoices with their payment, and
 * Private Node requests. The rules that make a replayed or doubled request harmless live here,
 * because every instance applies the log in the same order and so agrees on who won:
 * - a SIWE nonce opens one session: the first SignedIn of a nonce; later ones are ignored;
 * - a transfer (network, tx, log index) pays one invoice: the first PaymentConfirmed of it, and
 *   only if that invoice was still unpaid (else the transfer stays free for another invoice);
 * - a free plan is claimed once per account.
 */
export const billingProjection: Projection = {
  name: 'billing',
  apply(event: TollgateEvent, writer: StateWriter): void {
    switch (event.type) {
      case 'SignedIn':
        if (!writer.claimFirst(claimKeys.nonce(event.nonce), { by: event.sessionHash, at: event.time })) return
        writer.putSession(event.sessionHash, { accountId: event.accountId, wallet: event.wallet, expiresAt: event.expiresAt })
        return
      case 'SignedOut': {
        const session = writer.session(event.sessionHash)
        if (session?.accountId === event.accountId) writer.removeSession(event.sessionHash)
        return
      }
      case 'FreePlanClaimed':
        writer.claimFirst(claimKeys.freePlan(event.accountId, event.planId), { by: event.attempt, at: event.time })
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
          paid: null,
          activated: false,
        })
        return
      case 'PaymentConfirmed': {
        const invoice = writer.invoice(event.invoiceId)
        if (invoice === undefined || invoice.accountId !== event.accountId || invoice.paid !== null) return
        const key = claimKeys.payment(event.network, event.txHash, event.logIndex)
        if (!writer.claimFirst(key, { by: event.attempt, invoiceId: event.invoiceId, at: event.time })) return
        writer.putInvoice({
          ...invoice,
          paid: {
            txHash: event.txHash.toLowerCase(),
            logIndex: event.logIndex,
            amount: event.amount,
            blockNumber: event.blockNumber,
            paidAt: event.time,
            attempt: event.attempt,
          },
        })
        writer.putClaim(claimKeys.pendingActivation(event.accountId), { by: event.invoiceId, at: event.time })
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
        return
      case 'AccountCreated':
      case 'PlanEnded':
      case 'NodesSelected':
      case 'KeyIssued':
      case 'RateLimited':
      case 'UsageRecorded':
      case 'DomainsRestricted':
      case 'IpThrottled':
      case 'WsLimited':
      case 'WsCooldownStarted':
      case 'WsPenaltyImposed':
      case 'NotificationsRecorded':
        return
      default:
        return unhandledEvent(event)
    }
  },
}
