import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { SiweError } from '../accounts/errors.js'

/** How long a nonce may be used after it was handed out. */
export const NONCE_TTL_MS = 5 * 60_000

/**
 * Most spent nonces remembered at once. Each is kept until it expires anyway (NONCE_TTL_MS), and
 * each cost a sign-in attempt that the per-IP limit admitted, so this is reached only by many
 * IPs at once; past it the oldest (the nearest to its expiry) is forgotten first.
 */
const MAX_SPENT = 100_000

/**
 * SIWE nonces that need no storage until they are used: `<expiry, 8 hex of seconds><16 hex random>
 * <24 hex HMAC>`, all alphanumeric as EIP-4361 wants. Handing one out writes nothing (a page load
 * cannot fill the log); that it is ours and fresh is checked here.
 *
 * A nonce is single-use whether its sign-in succeeds or fails: a successful one is recorded in the
 * log (the account's SignedIn; the decider refuses it again on every instance), and every nonce a
 * sign-in was attempted with is `spend`-ed here first, so this process refuses it after, even when
 * the signature was junk (without this, one nonce served any number of tries, each a signature
 * check on our node). A failed attempt writes nothing to the log, so across N instances a nonce
 * can be tried at most once per instance.
 *
 * The HMAC key is derived from TOLLGATE_SECRET, so every instance of a deployment accepts the
 * nonces of the others.
 * @example
 * const nonces = new SiweNonces(secret); const n = nonces.issue(Date.now()); nonces.spend(n, nonces.check(n, Date.now()))
 */
export class SiweNonces {
  readonly #key: Buffer
  readonly #ttlMs: number
  readonly #maxSpent: number
  /** nonce → when it expires, in the order spent (near enough the order they expire in: one TTL for all). */
  readonly #spent = new Map<string, number>()

  constructor(secret: string, opts: { ttlMs?: number; maxSpent?: number } = {}) {
    this.#key = createHmac('sha256', secret).update('tollgate siwe nonce v1').digest()
    this.#ttlMs = opts.ttlMs ?? NONCE_TTL_MS
    this.#maxSpent = opts.maxSpent ?? MAX_SPENT
  }

  /** Spent nonces remembered now (expired ones are forgotten as new ones come). */
  get spentCount(): number {
    return this.#spent.size
  }

  issue(now: number): string {
    const expiry = Math.ceil((now + this.#ttlMs) / 1000)
      .toString(16)
      .padStart(8, '0')
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

  /**
   * Mark a checked nonce used by this attempt, before anything is verified; throws SiweError
   * NONCE_USED when this process saw it before. `expiresAt` is what `check` returned.
   */
  spend(nonce: string, expiresAt: number, now: number): void {
    if (this.#spent.has(nonce)) throw new SiweError('NONCE_USED', 'this sign-in message was already tried; sign in again')
    // Forget from the oldest: the expired ones (nothing can use them), and the oldest past the bound.
    for (const [old, until] of this.#spent) {
      if (until > now && this.#spent.size < this.#maxSpent) break
      this.#spent.delete(old)
    }
    this.#spent.set(nonce, expiresAt)
  }

  #mac(body: string): string {
    return createHmac('sha256', this.#key).update(body).digest('hex').slice(0, 24)
  }
}
