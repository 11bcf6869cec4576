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
export class SiweError extends Error {
  override name = 'SiweError'
  readonly code: SiweRefusal
  constructor(code: SiweRefusal, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
  }
}
