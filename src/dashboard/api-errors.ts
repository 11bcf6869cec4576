import { AccountCommandError } from '../accounts/errors.js'
import { EventLogUnavailable } from '../events/errors.js'
import { PaymentError } from '../accounts/errors.js'
import { SiweError } from '../accounts/errors.js'
import { UsageUnavailable } from '../usage/errors.js'

/**
 * Errors of the dashboard's JSON API (`/api/`): a stable code, the HTTP status and words a user
 * understands (the dashboard shows `message`). docs/dashboard.md's API error table is rendered from
 * this (renderApiErrorTable) and a test checks it.
 */
export const API_ERRORS = {
  NOT_SIGNED_IN: {
    http: 401,
    when: 'no session cookie, or the session expired or ended',
    message: 'You are not signed in (or your session expired): connect your wallet and sign in.',
  },
  BAD_REQUEST: { http: 400, when: 'the body is not the JSON the endpoint expects', message: 'The request was not understood.' },
  WRONG_ORIGIN: {
    http: 403,
    when: 'a state-changing call from another origin, or without `Content-Type: application/json` (CSRF guard)',
    message: 'This request must come from the dashboard page itself.',
  },
  NOT_FOUND: { http: 404, when: 'no such API path', message: 'There is no such thing here.' },
  RATE_LIMITED: {
    http: 429,
    when: 'too many calls of one kind from one IP address or one account (`dashboard.limits`); `Retry-After` and `details.retryAfterSeconds` say when to try again, `details.limit` which limit',
    message: 'Too many attempts: wait a moment and try again.',
  },
  DASHBOARD_DISABLED: { http: 503, when: 'the gateway runs without `TOLLGATE_SECRET`', message: 'The dashboard is not available on this gateway.' },
  // Sign-in (SIWE)
  BAD_MESSAGE: { http: 400, when: 'the sign-in message is not EIP-4361', message: 'The sign-in message is not valid; try again.' },
  WRONG_DOMAIN: {
    http: 400,
    when: "the message's domain is not this gateway's (`publicUrl`, else `listen`)",
    message: 'The sign-in message is for another site.',
  },
  WRONG_URI: { http: 400, when: "the message's URI is not on this gateway's origin", message: 'The sign-in message is for another site.' },
  WRONG_CHAIN: {
    http: 400,
    when: 'the message names a chain id no network of the config has',
    message: 'Your wallet is on a network this gateway does not serve.',
  },
  ACCOUNT_ON_OTHER_CHAIN: {
    http: 403,
    when: "a contract wallet's signature from another chain than the one its account was bound to (its first contract sign-in)",
    message: 'This account belongs to a contract wallet on another chain: switch your wallet to that chain and sign in again.',
  },
  BAD_NONCE: { http: 400, when: 'the nonce was not issued by this gateway', message: 'The sign-in request was not issued here; try again.' },
  NONCE_EXPIRED: { http: 400, when: 'the nonce is older than 5 minutes', message: 'The sign-in request expired; try again.' },
  NONCE_USED: {
    http: 409,
    when: 'the nonce was used already (a replayed or doubled sign-in, or a sign-in with it failed)',
    message: 'This sign-in was already used; sign in again.',
  },
  MESSAGE_EXPIRED: { http: 400, when: 'Expiration Time passed, or Issued At is too old', message: 'The sign-in message expired; try again.' },
  NOT_YET_VALID: { http: 400, when: 'Issued At or Not Before is in the future', message: "The sign-in message is not valid yet: check your computer's clock." },
  BAD_SIGNATURE: { http: 401, when: 'the signature is not by the address (EOA, ERC-1271 or ERC-6492)', message: 'The signature does not match your wallet.' },
  CHAIN_UNAVAILABLE: {
    http: 503,
    when: "the gateway's own node could not be asked (contract wallet, payment check)",
    message: 'The blockchain node did not answer; try again in a moment.',
  },
  // Plans, payments
  UNKNOWN_PLAN: { http: 404, when: 'no such plan in the catalog', message: 'There is no such plan.' },
  BAD_NODES: { http: 400, when: 'the node choice does not fit the plan', message: 'That choice of nodes does not fit the plan.' },
  FREE_PLAN_USED: { http: 409, when: 'the free plan was already taken by this wallet', message: 'The free trial was already used by this wallet.' },
  WRONG_PLAN_KIND: {
    http: 400,
    when: 'a paid plan without payment, a free one with an invoice, the private plan paid online',
    message: 'This plan cannot be taken that way.',
  },
  PAYMENTS_DISABLED: { http: 503, when: 'no `payments` in the config', message: 'Paid plans are not available on this gateway.' },
  UNKNOWN_INVOICE: { http: 404, when: 'no such invoice for this account', message: 'There is no such invoice.' },
  BAD_TX_HASH: { http: 400, when: 'not 0x + 64 hex digits', message: 'That is not a transaction hash.' },
  NOT_FOUND_YET: { http: 202, when: 'no receipt yet (pending: ask again)', message: 'Payment not found yet: it may still be waiting to be mined.' },
  UNCONFIRMED: { http: 202, when: 'fewer than `payments.confirmations` blocks (pending: ask again)', message: 'Payment found; waiting for confirmations.' },
  TX_FAILED: { http: 402, when: 'the transaction reverted', message: 'The payment transaction failed on chain.' },
  NO_TRANSFER: { http: 402, when: 'the transaction has no ERC-20 Transfer', message: 'This transaction is not a token payment.' },
  WRONG_TOKEN: { http: 402, when: 'Transfer of another token', message: 'The payment was made in another token.' },
  WRONG_RECIPIENT: { http: 402, when: 'Transfer to another address than the treasury', message: 'The payment went to another address.' },
  WRONG_SENDER: { http: 402, when: "Transfer from another wallet than the account's", message: 'The payment came from another wallet.' },
  TOO_SMALL: { http: 402, when: 'Transfer of less than the invoice', message: 'The payment is too small.' },
  REORGED: { http: 409, when: "the receipt's block is no longer canonical", message: 'The payment was undone by a chain reorganisation.' },
  ALREADY_USED: { http: 409, when: 'the transfer already paid another invoice', message: 'This payment was already used for another invoice.' },
  INVOICE_PAID: { http: 409, when: 'the invoice is paid by another transaction', message: 'This invoice is already paid.' },
  INVOICE_EXPIRED: {
    http: 409,
    when: 'the transfer was mined after the invoice expired (`payments.invoiceTtlMs`): recorded as `PaymentUnmatched`; it can pay a fresh invoice',
    message: 'This invoice expired before your payment was mined. The payment is recorded: a new invoice for the plan accepts the same transaction.',
  },
  MINED_BEFORE_INVOICE: {
    http: 409,
    when: "the transfer was mined before the invoice existed (more than 30 s before, by its block's time), and is not a late payment of an earlier invoice",
    message: 'This payment was made before the invoice existed, so it was not made for it: pay the invoice with a new transfer.',
  },
  // Keys
  NO_ACTIVE_KEY: { http: 409, when: 'the account has no key yet (no plan taken)', message: 'You have no API key yet: choose a plan first.' },
  BAD_GRACE: { http: 400, when: 'grace period not a number of seconds >= 0 (at most 30 days)', message: 'That grace period is not valid.' },
  BAD_DOMAINS: { http: 400, when: 'an allowlist entry is not a host name, or more than 20', message: 'That domain list is not valid.' },
  BAD_JWT_KEY: {
    http: 400,
    when: 'a signing key that is private, a secret, RSA under 2048 bits, not of its algorithm (ES256, RS256, EdDSA); a fourth key; a kid taken, or unknown; a token required with no key registered',
    message: 'That signing key is not valid.',
  },
  BAD_RESTRICTIONS: {
    http: 400,
    when: 'a restriction entry is not a method, an address, an IP or CIDR, or a user agent; more entries than its bound; methods and deniedMethods together; an unknown type',
    message: 'Those key restrictions are not valid.',
  },
  TOO_MANY_REGENERATIONS: {
    http: 429,
    when: 'more than 10 regenerations of the key in an hour',
    message: 'The key was regenerated too often in the last hour; try again later.',
  },
  // Usage
  USAGE_UNAVAILABLE: {
    http: 503,
    when: 'this instance does not project usage (`usage.project` false) and no instance that does answered its ask within 2 s, or 64 asks wait already; `details.reason` says which',
    message:
      'This gateway does not keep usage itself (usage.project is false), and no gateway that does answered within 2 s: run at least one instance with usage.project true on the same event stream, then try again.',
  },
  EVENT_LOG_UNAVAILABLE: {
    http: 503,
    when: 'the event log (NATS JetStream) cannot be reached now, and the call needs it; `Retry-After` says when to try again',
    message: 'The gateway cannot reach its event log right now; try again in a few seconds.',
  },
  INTERNAL: { http: 500, when: 'a fault in the gateway', message: 'Something went wrong on our side; try again.' },
} as const satisfies Record<string, { http: number; when: string; message: string }>

export type ApiErrorCode = keyof typeof API_ERRORS

/** An API answer that is an error: `{ "error": { code, message, details? } }` with its status. */
export class ApiError extends Error {
  override name = 'ApiError'
  readonly code: ApiErrorCode
  readonly http: number
  readonly details?: Readonly<Record<string, string | number>>
  /** Extra headers for the HTTP answer (Retry-After). */
  readonly headers?: Readonly<Record<string, string>>
  constructor(
    code: ApiErrorCode,
    message?: string,
    options?: { cause?: unknown; details?: Record<string, string | number>; headers?: Record<string, string> },
  ) {
    super(message ?? API_ERRORS[code].message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.http = API_ERRORS[code].http
    this.details = options?.details
    this.headers = options?.headers
  }
}

/** The API error for what a command threw; anything unexpected is INTERNAL (and logged by the caller). */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err
  if (err instanceof SiweError) return new ApiError(err.code, capitalize(err.message), { cause: err })
  if (err instanceof PaymentError) {
    const code: ApiErrorCode = err.code === 'NOT_FOUND' ? 'NOT_FOUND_YET' : err.code
    return new ApiError(code, capitalize(err.message), { cause: err, details: { ...err.details } })
  }
  // An outage, not a fault: one 503 per call, and no error line per call (the log's own client reports the outage).
  if (err instanceof EventLogUnavailable) return new ApiError('EVENT_LOG_UNAVAILABLE', undefined, { cause: err, headers: { 'Retry-After': '5' } })
  if (err instanceof UsageUnavailable)
    return new ApiError('USAGE_UNAVAILABLE', undefined, { cause: err, details: { reason: err.reason }, headers: { 'Retry-After': '5' } })
  if (err instanceof AccountCommandError) {
    const code: ApiErrorCode = err.code === 'BAD_WALLET' || err.code === 'UNKNOWN_ACCOUNT' ? 'NOT_SIGNED_IN' : err.code
    return new ApiError(code, capitalize(err.message), { cause: err })
  }
  return new ApiError('INTERNAL', undefined, { cause: err })
}

function capitalize(text: string): string {
  const sentence = text.charAt(0).toUpperCase() + text.slice(1)
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`
}

/** The table of API errors in docs/dashboard.md. */
export function renderApiErrorTable(): string {
  const rows = ['| code | HTTP | when |', '|---|---|---|']
  for (const [code, e] of Object.entries(API_ERRORS)) rows.push(`| \`${code}\` | ${e.http} | ${e.when} |`)
  return rows.join('\n')
}
