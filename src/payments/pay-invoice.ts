import { randomBytes } from 'node:crypto'
import type { InvoiceRecord } from '../store/records.js'
import { hostOf, newKey } from '../accounts/commands.js'
import { transferKey } from '../accounts/account-state.js'
import { minedAfterExpiry } from '../accounts/decide.js'
import { invoiceRecord, type InvoiceDeps } from './invoices.js'
import { PaymentError } from '../accounts/errors.js'
import { verifyTransfer } from './verify-transfer.js'

export interface PaidInvoice {
  invoice: InvoiceRecord
  /** The key issued with the activation (an account without a key), else null. */
  apiKey: string | null
}

/**
 * Pay an invoice with the ERC-20 transfer in transaction `txHash`, checked through our own node
 * (verifyTransfer), then activate its plan: PaymentConfirmed, PlanActivated, NodesSelected and
 * KeyIssued when the account has no key, in one append. No operator is involved.
 *
 * One transfer pays one invoice, even when offered for two at once on two instances: the
 * transfer comes from the account's own wallet, so every invoice it could pay is in the account's
 * stream, and the decider refuses a transfer that stream already used; two payments decided at
 * once append at the same version and the log takes one (the other is decided again and refused).
 *
 * A transfer mined after the invoice expired pays nothing: it is recorded (PaymentUnmatched) and
 * refused with INVOICE_EXPIRED; the same transaction may then pay a fresh invoice of the plan.
 * @throws PaymentError
 */
export async function payInvoice(deps: InvoiceDeps, input: { accountId: string; invoiceId: string; txHash: string }): Promise<PaidInvoice> {
  if (deps.payments === undefined || deps.rpc === undefined)
    throw new PaymentError('PAYMENTS_DISABLED', 'paid plans are not available on this gateway (no payments configured)')
  const host = hostOf(deps)
  const account = await host.load(input.accountId)
  const invoice = account.invoices.get(input.invoiceId)
  if (invoice === undefined) throw new PaymentError('UNKNOWN_INVOICE', 'there is no such invoice for this account')
  const priceUsd = deps.catalog.get(invoice.planId)?.priceUsdPerMonth ?? 0
  if (invoice.paid !== null) {
    if (invoice.paid.txHash !== String(input.txHash).toLowerCase())
      throw new PaymentError('INVOICE_PAID', 'this invoice is already paid (by another transaction); nothing more is due')
    const apiKey = await ensureActivated(deps, input.accountId, invoice.invoiceId)
    return { invoice: invoiceRecord(input.accountId, (await host.load(input.accountId)).invoices.get(invoice.invoiceId)!, priceUsd), apiKey }
  }
  const network = invoice.network
  const transfer = await verifyTransfer(deps.rpc, {
    txHash: input.txHash,
    token: invoice.token,
    treasury: invoice.treasury,
    from: account.wallet,
    minAmount: BigInt(invoice.amount),
    decimals: invoice.decimals,
    confirmations: deps.payments.confirmations,
    isUsed: (logIndex) => account.transfers.has(transferKey(network, input.txHash, logIndex)),
  })
  const key = newKey(deps)
  const { events, state } = await host.execute(input.accountId, {
    type: 'ConfirmPayment',
    invoiceId: invoice.invoiceId,
    transfer: {
      network,
      txHash: transfer.txHash,
      logIndex: transfer.logIndex,
      from: account.wallet,
      amount: transfer.amount.toString(),
      blockNumber: transfer.blockNumber,
      blockHash: transfer.blockHash,
      minedAt: transfer.minedAt,
    },
    attempt: randomBytes(12).toString('hex'),
    key: key.made,
    now: deps.clock.now(),
  })
  const after = state.invoices.get(invoice.invoiceId)!
  if (after.paid === null && minedAfterExpiry(after, transfer.minedAt)) throw expired(after.expiresAt!, transfer.minedAt, transfer.txHash)
  const apiKey = events.some((e) => e.type === 'KeyIssued' && e.keyId === key.made.keyId) ? key.clear : null
  return { invoice: invoiceRecord(input.accountId, state.invoices.get(invoice.invoiceId)!, priceUsd), apiKey }
}

/**
 * Activate the plan of a paid invoice unless it was: after a crash between the payment and the
 * activation (an older version appended them apart), the next look at the invoice finishes the
 * job. The period starts when it was paid, so PlanActivated's id is the same however often it runs.
 */
export async function ensureActivated(deps: InvoiceDeps, accountId: string, invoiceId: string): Promise<string | null> {
  const key = newKey(deps)
  const { events } = await hostOf(deps).execute(accountId, { type: 'ActivatePaidInvoice', invoiceId, key: key.made, now: deps.clock.now() })
  return events.some((e) => e.type === 'KeyIssued' && e.keyId === key.made.keyId) ? key.clear : null
}

function expired(expiresAt: number, minedAt: number, txHash: string): PaymentError {
  const when = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z')
  return new PaymentError(
    'INVOICE_EXPIRED',
    `this invoice expired at ${when(expiresAt)} and the payment was mined after it (${when(minedAt)}), so it did not pay it. ` +
      'The payment is recorded, not lost: make a new invoice for the plan and give it the same transaction (no second payment is needed)',
    { expiredAt: expiresAt, minedAt, txHash },
  )
}
