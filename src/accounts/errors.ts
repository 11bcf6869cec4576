import { CodedError } from '../errors/coded-error.js'

/**
 * Errors of the account commands. Each has a stable `code` that the CLI and the dashboard can
 * map (to an exit status, an HTTP status) without parsing messages.
 */
export type AccountErrorCode =
  | 'BAD_WALLET'
  | 'UNKNOWN_PLAN'
  | 'BAD_NODES'
  | 'BAD_GRACE'
  | 'UNKNOWN_ACCOUNT'
  | 'NO_ACTIVE_KEY'
  | 'FREE_PLAN_USED'
  | 'WRONG_PLAN_KIND'
  | 'BAD_DOMAINS'
  | 'BAD_RESTRICTIONS'
  | 'TOO_MANY_REGENERATIONS'
  | 'BAD_JWT_KEY'

/** Base class: a command refused what it was asked (nothing was appended). */
export class AccountCommandError extends CodedError<AccountErrorCode> {
  override name = 'AccountCommandError'
}

export class BadWalletError extends AccountCommandError {
  override name = 'BadWalletError'
  constructor(wallet: unknown) {
    super('BAD_WALLET', `wallet ${JSON.stringify(wallet)} is not an address: expected 0x followed by 40 hex digits`)
  }
}

export class UnknownPlanError extends AccountCommandError {
  override name = 'UnknownPlanError'
  constructor(planId: string, known: readonly string[]) {
    super('UNKNOWN_PLAN', `unknown plan ${JSON.stringify(planId)}; the plan catalog has: ${known.join(', ')}`)
  }
}

export class BadNodesError extends AccountCommandError {
  override name = 'BadNodesError'
  constructor(detail: string) {
    super('BAD_NODES', `bad node selection: ${detail}`)
  }
}

export class BadGraceError extends AccountCommandError {
  override name = 'BadGraceError'
  constructor(graceMs: unknown) {
    super('BAD_GRACE', `graceMs must be a finite number of milliseconds >= 0, got ${String(graceMs)}`)
  }
}

export class UnknownAccountError extends AccountCommandError {
  override name = 'UnknownAccountError'
  constructor(accountId: string) {
    super('UNKNOWN_ACCOUNT', `unknown account ${JSON.stringify(accountId)}: no AccountCreated event for it in the log`)
  }
}

export class NoActiveKeyError extends AccountCommandError {
  override name = 'NoActiveKeyError'
  constructor(accountId: string) {
    super('NO_ACTIVE_KEY', `account ${JSON.stringify(accountId)} has no active API key; regenerate one`)
  }
}

export class FreePlanUsedError extends AccountCommandError {
  override name = 'FreePlanUsedError'
  constructor(planName: string) {
    super('FREE_PLAN_USED', `the ${planName} was already used by this wallet; it can be taken once. Choose a paid plan`)
  }
}

/** The plan cannot be taken this way (a paid plan without payment, a free plan with an invoice, a private plan). */
export class WrongPlanKindError extends AccountCommandError {
  override name = 'WrongPlanKindError'
  constructor(message: string) {
    super('WRONG_PLAN_KIND', message)
  }
}

export class BadDomainsError extends AccountCommandError {
  override name = 'BadDomainsError'
  constructor(detail: string) {
    super('BAD_DOMAINS', `bad domain list: ${detail}; expected host names such as example.com, *.example.com or localhost:3000`)
  }
}

export class BadRestrictionsError extends AccountCommandError {
  override name = 'BadRestrictionsError'
  constructor(detail: string, options?: { cause?: unknown }) {
    super('BAD_RESTRICTIONS', `bad key restrictions: ${detail}`, options)
  }
}

/** More regenerations in an hour than allowed: each one would otherwise leave a key in its grace period. */
export class TooManyRegenerationsError extends AccountCommandError {
  override name = 'TooManyRegenerationsError'
  constructor(
    readonly perHour: number,
    readonly retryAfterMs: number,
  ) {
    super(
      'TOO_MANY_REGENERATIONS',
      `the key was regenerated ${perHour} times in the last hour, the most allowed; try again in ${Math.ceil(retryAfterMs / 60_000)} min`,
    )
  }
}

// Sign-in (src/siwe/) and payments (src/payments/) are account commands too: decide.ts refuses
// them, so their refusals live here, below the folders that use them.

/** Why a sign-in was refused; the dashboard API maps each to an HTTP status and words for users. */
export type SiweRefusal =
  | 'BAD_MESSAGE'
  | 'WRONG_DOMAIN'
  | 'WRONG_URI'
  | 'WRONG_CHAIN'
  | 'ACCOUNT_ON_OTHER_CHAIN'
  | 'BAD_NONCE'
  | 'NONCE_EXPIRED'
  | 'NONCE_USED'
  | 'MESSAGE_EXPIRED'
  | 'NOT_YET_VALID'
  | 'BAD_SIGNATURE'
  | 'CHAIN_UNAVAILABLE'

/** A sign-in was refused: nothing was appended, no session exists. */
export class SiweError extends CodedError<SiweRefusal> {
  override name = 'SiweError'
}

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

export class PaymentError extends CodedError<PaymentRefusal> {
  override name = 'PaymentError'
  /** Figures for the dashboard (confirmations have/need, amounts). */
  readonly details: Readonly<Record<string, string | number>>
  constructor(code: PaymentRefusal, message: string, details: Record<string, string | number> = {}, options?: { cause?: unknown }) {
    super(code, message, options)
    this.details = details
  }

  /** Not final: the same transaction may be accepted later (mined, confirmed). */
  get pending(): boolean {
    return this.code === 'NOT_FOUND' || this.code === 'UNCONFIRMED'
  }
}

/** A signing key refused: not a public key fit for its algorithm, a fourth one, a kid taken or unknown, or a token required with no key. */
export class BadJwtKeyRegistrationError extends AccountCommandError {
  override name = 'BadJwtKeyRegistrationError'
  constructor(detail: string, options?: { cause?: unknown }) {
    super('BAD_JWT_KEY', `bad signing key: ${detail}`, options)
  }
}

/** createAccount found the account open: nothing was changed, no key issued. */
export class AccountOpenError extends Error {
  override name = 'AccountOpenError'
  constructor(readonly accountId: string) {
    super(`account ${accountId} already has a key or a plan: nothing was changed (a new key: regenerateKey)`)
  }
}
