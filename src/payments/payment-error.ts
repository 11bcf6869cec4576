/**
 * Why a payment was not accepted (yet). `NOT_FOUND` and `UNCONFIRMED` are "not yet": the
 * dashboard keeps asking; the others are final for that transaction.
 */
export type PaymentRefusal =
  | 'PAYMENTS_DISABLED'
  | 'BAD_TX_HASH'
  | 'NOT_FOUND'
  | 'UNCONFIRMED'
  | 'TX_FAILED'
  | 'NO_TRANSFER'
  | 'WRONG_TOKEN'
  | 'WRONG_RECIPIENT'
  | 'WRONG_SENDER'
  | 'TOO_SMALL'
  | 'REORGED'
  | 'ALREADY_USED'
  | 'INVOICE_PAID'
  | 'INVOICE_EXPIRED'
  | 'MINED_BEFORE_INVOICE'
  | 'UNKNOWN_INVOICE'
  | 'CHAIN_UNAVAILABLE'

export class PaymentError extends Error {
  override name = 'PaymentError'
  readonly code: PaymentRefusal
  /** Figures for the dashboard (confirmations have/need, amounts). */
  readonly details: Readonly<Record<string, string | number>>
  constructor(code: PaymentRefusal, message: string, details: Record<string, string | number> = {}, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
    this.details = details
  }

  /** Not final: the same transaction may be accepted later (mined, confirmed). */
  get pending(): boolean {
    return this.code === 'NOT_FOUND' || this.code === 'UNCONFIRMED'
  }
}
