import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose'
import { refusal } from '../errors/messages.js'
import { GatewayError } from '../errors/registry.js'
import { BadDomainsError } from '../accounts/errors.js'
import { normalizeDomains } from '../accounts/key-settings.js'
import { JWT_ALGS, keyObjectOf, type JwtPublicKey } from '../keys/jwt-keys.js'
import { normalizeRestrictions, RESTRICTION_BOUNDS, type KeyRestrictions } from '../keys/key-restrictions.js'
import { BadRestrictionError } from '../keys/errors.js'
import { knownMembers, strayMember } from '../rpc/member-names.js'

/** What a verified token says beyond "this key": when it ends and how it narrows the key. */
export interface TokenClaims {
  /** The key the token stands for (`sub`). */
  readonly keyId: string
  /** The registered key that signed it. */
  readonly kid: string
  /** `exp` in ms since epoch. */
  readonly expiresAt: number
  /** The token's own method and contract lists; undefined: it narrows neither. */
  readonly narrowing: KeyRestrictions | undefined
  /** The token's own origins (host names, as a key's domain allowlist); undefined: no rule. */
  readonly origins: readonly string[] | undefined
}

/** A token verified for its owner (the key's context, for the gateway). */
export interface VerifiedToken<O> {
  readonly owner: O
  readonly claims: TokenClaims
}

/** Where the verifier finds the key a token names, and the public keys of its account. */
export interface TokenOwners<O> {
  /** The owner of a key id, or the refusal (unknown, revoked key). */
  ownerOf(keyId: string): O | GatewayError
  /** The owner's registered public keys now: a new array whenever they change. */
  keysOf(owner: O): readonly JwtPublicKey[] | undefined
  /** Whether the owner is still the one in force (not reloaded since, not dropped). */
  current(owner: O): boolean
}

export interface TokenVerifierOptions {
  /** The `aud` a token must name (config keys.jwt.audience). */
  audience: string
  /** Tolerance on exp and nbf, in seconds, for clocks that differ (config keys.jwt.clockSkewSeconds). */
  clockSkewSeconds: number
  now: () => number
  /** Longest token read; longer ones are refused before any decoding (default TOKEN_MAX_BYTES). */
  maxBytes?: number
  /** Verified tokens kept (default 10,000). */
  cacheEntries?: number
  /** Characters of the verified tokens kept, all together (default 8,000,000): 10,000 tokens of 8 KB would be 80 MB. */
  cacheChars?: number
}

/**
 * Longest token read, checked before anything is decoded: a real token with every narrowing list
 * at its bound fits well under it, and a 100 KB token is refused at the cost of one length read.
 */
export const TOKEN_MAX_BYTES = 8192

/** Three base64url parts; the signature part of an unsigned token (`alg: none`) is empty. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

/** Whether a bearer credential is a token rather than an API key (`tg_…`, no dots). */
export function looksLikeToken(credential: string): boolean {
  return credential.includes('.')
}

interface CacheEntry<O> {
  readonly verified: VerifiedToken<O>
  /** The owner's key set it was verified against: another set (a key removed) means verify again. */
  readonly keys: readonly JwtPublicKey[]
  /** Until when (ms) it holds: exp plus the clock skew. */
  readonly until: number
}

/**
 * Checks the signed tokens calls carry instead of (or beside) an API key. The order of checks is
 * the cost order: size, cache, shape, header, claims, owner, key, and only then the signature,
 * so garbage costs a length read or a regex, and a token seen before costs a map lookup (the
 * issue's goal: at most 20 µs of CPU for a call with a cached token; bench/token-cost.ts).
 *
 * The algorithm is pinned to the registered key's: a token saying `alg: none`, or HS256 with the
 * public key as the HMAC secret (algorithm confusion), is refused before jose is asked, and jose is
 * asked with `algorithms: [that alg]` as a second guard.
 * @example
 * const v = verifier.check(token)
 * const verified = v instanceof Promise ? await v : v
 * if (verified instanceof GatewayError) return refuse(verified)
 */
export class TokenVerifier<O> {
  readonly #owners: TokenOwners<O>
  readonly #opts: Required<TokenVerifierOptions>
  readonly #cache = new Map<string, CacheEntry<O>>()
  /** Characters of the tokens in #cache. */
  #chars = 0

  constructor(owners: TokenOwners<O>, opts: TokenVerifierOptions) {
    this.#owners = owners
    this.#opts = { maxBytes: TOKEN_MAX_BYTES, cacheEntries: 10_000, cacheChars: 8_000_000, ...opts }
  }

  /** The verified token, or its refusal; a promise only when the signature must be checked. */
  check(token: string): VerifiedToken<O> | GatewayError | Promise<VerifiedToken<O> | GatewayError> {
    const { maxBytes, audience, clockSkewSeconds, now } = this.#opts
    if (token.length > maxBytes) {
      return refusal('TOKEN_TOO_LARGE', { length: token.length, max: maxBytes })
    }
    const hit = this.#cache.get(token)
    if (hit !== undefined) {
      if (hit.until > now() && this.#owners.current(hit.verified.owner) && this.#owners.keysOf(hit.verified.owner) === hit.keys) return hit.verified
      this.#forget(token)
    }
    if (!JWT_SHAPE.test(token)) return new GatewayError('TOKEN_MALFORMED')
    let alg: unknown
    let kid: unknown
    let payload: JWTPayload
    try {
      ;({ alg, kid } = decodeProtectedHeader(token))
      payload = decodeJwt(token)
    } catch (err) {
      return refusal('TOKEN_NOT_JSON', { why: (err as Error).message })
    }
    if (typeof alg !== 'string' || !(JWT_ALGS as readonly string[]).includes(alg)) {
      return refusal('TOKEN_ALG_UNKNOWN', { alg: String(alg), accepted: JWT_ALGS })
    }
    if (typeof kid !== 'string' || kid === '') return refusal('TOKEN_NO_KID', {})
    const claims = claimsOf(payload, kid)
    if (claims instanceof GatewayError) return claims
    const owner = this.#owners.ownerOf(claims.keyId)
    if (owner instanceof GatewayError) return owner
    const keys = this.#owners.keysOf(owner) ?? []
    const key = keys.find((k) => k.kid === kid)
    if (key === undefined) {
      return refusal('TOKEN_KID_NOT_REGISTERED', { kid, registered: keys.map((k) => k.kid) })
    }
    if (key.alg !== alg) {
      return refusal('TOKEN_ALG_NOT_THE_KEYS', { alg, kid: key.kid, keyAlg: key.alg })
    }
    const at = now()
    return jwtVerify(token, keyObjectOf(key), {
      algorithms: [key.alg],
      audience,
      clockTolerance: clockSkewSeconds,
      requiredClaims: ['exp'],
      currentDate: new Date(at),
    }).then(
      () => {
        const verified: VerifiedToken<O> = { owner, claims }
        this.#remember(token, { verified, keys, until: claims.expiresAt + clockSkewSeconds * 1000 })
        return verified
      },
      (err: unknown) => refusalOf(err, audience),
    )
  }

  /** Verified tokens in the cache (for the tests and the metrics). */
  get cached(): number {
    return this.#cache.size
  }

  #remember(token: string, entry: CacheEntry<O>): void {
    // Bounded in tokens and in characters: a tenant minting a long token per call must not grow
    // the map (nor hold 10,000 tokens of 8 KB); the oldest go first.
    this.#forget(token)
    while (this.#cache.size > 0 && (this.#cache.size >= this.#opts.cacheEntries || this.#chars + token.length > this.#opts.cacheChars)) {
      this.#forget(this.#cache.keys().next().value!)
    }
    this.#cache.set(token, entry)
    this.#chars += token.length
  }

  #forget(token: string): void {
    if (this.#cache.delete(token)) this.#chars -= token.length
  }
}

/**
 * The claims the gateway reads, checked before the signature: a claim list past its bound is
 * refused at its length, whatever its entries (a token of 10,000 methods costs one comparison).
 */
function claimsOf(payload: JWTPayload, kid: string): TokenClaims | GatewayError {
  const bad = (what: string): GatewayError => refusal('TOKEN_CLAIM_INVALID', { what })
  // A claim the gateway reads, named in another case ("Contracts"), would be ignored here and the
  // token would narrow nothing: an issuer's slip that widens what the token allows, so refused.
  const stray = strayMember(payload, READ_CLAIMS)
  if (stray !== undefined) {
    return bad(`claim ${JSON.stringify(stray.name.slice(0, 64))} is read as nothing here, where claim names are case-sensitive; name it "${stray.canonical}"`)
  }
  if (typeof payload.sub !== 'string' || !payload.sub.startsWith('key_')) return bad('sub must be the key id the token stands for (key_…)')
  if (typeof payload.exp !== 'number' || !Number.isFinite(payload.exp)) return bad('exp (seconds since epoch) is required')
  const lists: Record<string, unknown> = {}
  for (const [claim, type] of [
    ['methods', 'methods'],
    ['contracts', 'contracts'],
  ] as const) {
    const list = payload[claim]
    if (list === undefined) continue
    if (!Array.isArray(list)) return bad(`${claim} must be a list`)
    if (list.length > RESTRICTION_BOUNDS[type]) return bad(`${claim} has ${list.length} entries, at most ${RESTRICTION_BOUNDS[type]}`)
    lists[type] = list
  }
  let narrowing: KeyRestrictions | undefined
  if (Object.keys(lists).length > 0) {
    try {
      narrowing = normalizeRestrictions(lists)
    } catch (err) {
      if (err instanceof BadRestrictionError) return bad(err.message)
      throw err
    }
    // An empty list in a token narrows to nothing rather than lifting a rule: a token never widens.
    for (const claim of Object.keys(lists) as ('methods' | 'contracts')[]) if (narrowing[claim] === undefined) narrowing[claim] = []
  }
  let origins: string[] | undefined
  const given = payload.origins
  if (given !== undefined) {
    if (!Array.isArray(given)) return bad('origins must be a list')
    if (given.length > MAX_TOKEN_ORIGINS) return bad(`origins has ${given.length} entries, at most ${MAX_TOKEN_ORIGINS}`)
    try {
      origins = normalizeDomains(given)
    } catch (err) {
      if (err instanceof BadDomainsError) return bad(`origins: ${err.message}`)
      throw err
    }
  }
  return { keyId: payload.sub, kid, expiresAt: payload.exp * 1000, narrowing, origins }
}

/** The claims the gateway or jose reads, by their exact names. */
const READ_CLAIMS = knownMembers('token claims', ['sub', 'exp', 'nbf', 'aud', 'methods', 'contracts', 'origins'])

/** As a key's domain allowlist (key-settings MAX_DOMAINS). */
const MAX_TOKEN_ORIGINS = 20

function refusalOf(err: unknown, audience: string): GatewayError {
  if (err instanceof errors.JWTExpired) return new GatewayError('TOKEN_EXPIRED')
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'nbf') return new GatewayError('TOKEN_NOT_YET_VALID')
    if (err.claim === 'aud') {
      return refusal('TOKEN_WRONG_AUDIENCE', { audience })
    }
    return refusal('TOKEN_CLAIM_INVALID', { what: `claim ${err.claim} ${err.reason}` })
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return new GatewayError('TOKEN_BAD_SIGNATURE')
  if (err instanceof errors.JOSEAlgNotAllowed) return new GatewayError('TOKEN_ALG_NOT_ALLOWED')
  if (err instanceof errors.JOSEError) return refusal('TOKEN_REFUSED_BY_JOSE', { why: err.message })
  return refusal('TOKEN_UNVERIFIABLE', {}, { cause: err })
}
