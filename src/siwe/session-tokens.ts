import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/** Characters of the MAC kept (96 bits in base64url): forging one is 2^96 guesses, each a request the api limit counts. */
const MAC_CHARS = 16

/**
 * Dashboard session tokens that say themselves whether this deployment issued them:
 * `<expiry, seconds in base 36>.<32 random bytes, base64url>.<HMAC of both>`, under a key derived
 * from TOLLGATE_SECRET (every instance of a deployment checks the others' tokens). A cookie that
 * fails the check, or whose expiry passed, is refused with a hash and a compare: before tokens
 * were signed, every unknown token made the API catch up with the event log (300 made-up cookies
 * cost 301 JetStream API calls, and during a NATS outage each was a 500). Only a token we signed
 * and that has not expired is looked up (the store, then the log); its SHA-256 is what events keep.
 * @example
 * const tokens = new SessionTokens(secret); const token = tokens.issue(expiresAt); tokens.valid(token, Date.now()) // true
 */
export class SessionTokens {
  readonly #key: Buffer

  constructor(secret: string) {
    this.#key = createHmac('sha256', secret).update('tollgate session token v1').digest()
  }

  /** A new token for a session that ends at `expiresAt` (ms). */
  issue(expiresAt: number): string {
    const body = `${Math.ceil(expiresAt / 1000).toString(36)}.${randomBytes(32).toString('base64url')}`
    return `${body}.${this.#mac(body)}`
  }

  /** Whether `token` is one of ours and its expiry has not passed at `now`. */
  valid(token: string, now: number): boolean {
    const cut = token.lastIndexOf('.')
    if (cut <= 0) return false
    const body = token.slice(0, cut)
    const mac = Buffer.from(token.slice(cut + 1))
    const expected = Buffer.from(this.#mac(body))
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) return false
    const expiresAt = parseInt(body.slice(0, body.indexOf('.')), 36) * 1000
    return Number.isFinite(expiresAt) && expiresAt > now
  }

  #mac(body: string): string {
    return createHmac('sha256', this.#key).update(body).digest('base64url').slice(0, MAC_CHARS)
  }
}
