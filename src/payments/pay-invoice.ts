import { randomBytes } from 'node:crypto'
import { makeEvent } from '../events/make-event.js'
import { claimKeys } from '../projections/billing-projection.js'
import type { InvoiceRecord } from '../store/records.js'
import { UnknownPlanError } from '../accounts/errors.js'
import { activationEvents } from '../accounts/plan-activation.js'
import type { InvoiceDeps } from './invoices.js'
import { PaymentError } from './payment-error.js'
import { verifyTransfer } from './verify-transfer.js'

export interface PaidInvoice {
  invoice: InvoiceRecord
  /** The key issued with the activation (an account without a key), else null. */
  apiKey: string | null
}

/**
 * Pay an invoice with the ERC-20 transfer in transaction `txHash`, checked through our own node
 * (verifyTransfer), then activate its plan: PaymentConfirmed, then PlanActivated, NodesSelected and
 * KeyIssued when the account has no key. No operator is involved.
 *
 * One transfer pays one invoice, even when offered for two at once on two instances:
 * PaymentConfirmed's id is derived from (network, tx hash, log index) only, so the log keeps one
 * of the two (JetStream msgID dedup within its window; the embedded log's id index), and the
 * projection records a transfer for the first invoice that claims it (so a copy stored after the
 * window still changes nothing). Each request carries a random `attempt`; after catching up,
 * the request whose attempt is recorded won and activates; the other is refused (ALREADY_USED).
 * @throws PaymentError
 */
export async function payInvoice(deps: InvoiceDeps, input: { accountId: string; invoiceId: string; txHash: string }): Promise<PaidInvoice> {
  if (deps.payments === undefined || deps.rpc === undefined) throw new PaymentError('PAYMENTS_DISABLED', 'paid plans are not available on this gateway (no payments configured)')
  await deps.projector.catchUp()
  const invoice = deps.store.invoice(input.invoiceId)
  if (invoice === undefined || invoice.accountId !== input.accountId) throw new PaymentError('UNKNOWN_INVOICE', 'there is no such invoice for this account')
  if (invoice.paid !== null) {
    if (invoice.paid.txHash !== String(input.txHash).toLowerCase()) throw new PaymentError('INVOICE_PAID', 'this invoice is already paid (by another transaction); nothing more is due')
    return { invoice: deps.store.invoice(invoice.invoiceId)!, apiKey: await ensureActivated(deps, invoice) }
  }
  const account = deps.store.account(input.accountId)!
  const network = invoice.network
  const transfer = await verifyTransfer(deps.rpc, {
    txHash: input.txHash,
    token: invoice.token,
    treasury: invoice.treasury,
    from: account.wallet,
    minAmount: BigInt(invoice.amount),
    decimals: invoice.decimals,
    confirmations: deps.payments.confirmations,
    isUsed: (logIndex) => deps.store.claim(claimKeys.payment(network, input.txHash, logIndex)) !== undefined,
  })

  const attempt = randomBytes(12).toString('hex')
  const now = deps.clock.now()
  await deps.log.append([
    makeEvent(
      {
        type: 'PaymentConfirmed',
        accountId: account.accountId,
        invoiceId: invoice.invoiceId,
        network,
        txHash: transfer.txHash,
        logIndex: transfer.logIndex,
        from: account.wallet,
        amount: transfer.amount.toString(),
        blockNumber: transfer.blockNumber,
        blockHash: transfer.blockHash,
        attempt,
      },
      now,
    ),
  ])
  await deps.projector.catchUp()
  const claim = deps.store.claim(claimKeys.payment(network, transfer.txHash, transfer.logIndex))
  const after = deps.store.invoice(invoice.invoiceId)!
  if (claim?.by !== attempt) {
    if (claim?.invoiceId === invoice.invoiceId) return { invoice: after, apiKey: null } // a concurrent request for this same invoice won
    if (claim === undefined) throw new PaymentError('INVOICE_PAID', 'this invoice was paid by another transaction meanwhile; nothing more is due')
    throw new PaymentError('ALREADY_USED', 'this payment was already used for another invoice')
  }
  const apiKey = await ensureActivated(deps, after)
  return { invoice: deps.store.invoice(invoice.invoiceId)!, apiKey }
}

/**
 * Activate the plan of a paid invoice unless it was: after a crash between the payment and the
 * activation, the next look at the invoice finishes the job. The period starts when it was paid,
 * so PlanActivated's id (account, plan, start) is the same however often this runs.
 */
export async function ensureActivated(deps: InvoiceDeps, invoice: InvoiceRecord): Promise<string | null> {
  if (invoice.paid === null || invoice.activated) return null
  if (deps.store.claim(claimKeys.pendingActivation(invoice.accountId))?.by !== invoice.invoiceId) return null
  const plan = deps.catalog.get(invoice.planId)
  if (plan === undefined) throw new UnknownPlanError(invoice.planId, deps.catalog.plans.map((p) => p.id))
  const account = deps.store.account(invoice.accountId)!
  const { events, apiKey } = activationEvents({ account, plan, nodes: invoice.nodes, startsAt: invoice.paid.paidAt, now: deps.clock.now(), cipher: deps.cipher })
  await deps.log.append(events)
  await deps.projector.catchUp()
  return apiKey
}
