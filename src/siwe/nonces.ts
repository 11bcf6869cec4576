import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { SiweError } from './siwe-error.js'

/** How long a nonce may be used after it was handed out. */
export const NONCE_TTL_MS = 10 * 60_000

/**
 * SIWE nonces that need no storage until they are used: `<expiry, 8 hex of seconds><16 hex random>
 * <24 hex HMAC>`, all alphanumeric as EIP-4361 wants. Handing one out writes nothing (a page load
 * cannot fill the log); that it is ours and fresh is checked here, and that it is used only once
 * is decided by the event log (the first SignedIn of a nonce wins, see billing-projection.ts).
 *
 * The HMAC key is derived from TOLLGATE_SECRET, so every instance of a deployment accepts the
 * nonces of the others.
 * @example
 * const nonces = new SiweNonces(secret); const n = nonces.issue(Date.now()); nonces.check(n, Date.now())
 */
export class SiweNonces {
  readonly #key: Buffer
  readonly #ttlMs: number

  constructor(secret: string, opts: { ttlMs?: number } = {}) {
    this.#key = createHmac('sha256', secret).update('tollgate siwe nonce v1').digest()
    this.#ttlMs = opts.ttlMs ?? NONCE_TTL_MS
  }

  issue(now: number): string {
    const expiry = Math.ceil((now + this.#ttlMs) / 1000).toString(16).padStart(8, '0')
    const body = expiry + randomBytes(8).toString('hex')
    return body + this.#mac(body)
  }

  /** When the nonce expires (ms); throws SiweError BAD_NONCE (not ours) or NONCE_EXPIRED. */
  check(nonce: string, now: number): number {
    if (typeof nonce !== 'string' || !/^[0-9a-f]{48}$/.test(nonce)) throw new SiweError('BAD_NONCE', 'the nonce was not issued by this gateway')
    const body = nonce.slice(0, 24)
    const mac = Buffer.from(nonce.slice(24), 'hex')
    if (!timingSafeEqual(mac, Buffer.from(this.#mac(body), 'hex'))) throw new SiweError('BAD_NONCE', 'the nonce was not issued by this gateway')
    const expiresAt = parseInt(body.slice(0, 8), 16) * 1000
    if (now >= expiresAt) throw new SiweError('NONCE_EXPIRED', `the nonce expired at ${new Date(expiresAt).toISOString()}; sign in again`)
    return expiresAt
  }

  #mac(body: string): string {
    return createHmac('sha256', this.#key).update(body).digest('hex').slice(0, 24)
  }
}
