import { refusal } from '../errors/messages.js'
import { GatewayError } from '../errors/registry.js'
import { originAllowed } from '../keys/domain-allowlist.js'
import { coverageGap, type Access } from '../plans/entitlements.js'
import type { UpstreamPool } from '../upstream/pool.js'
import type { Upstreams } from '../upstream/upstreams.js'
import type { IpDirectory } from './ip-directory.js'
import type { KeyContext, KeyDirectory } from './key-directory.js'
import type { PoolSelector } from './pool-selector.js'
import { requestRefusal, type KeyRuleSink } from './key-rules.js'
import { TokenVerifier, type TokenClaims, type VerifiedToken } from './token-verifier.js'

/** What a request says about who it is, copied from it before anything asynchronous happens. */
export interface AdmissionRequest {
  network: string
  /** The key as sent (`?apikey=` or `Authorization: Bearer`); '' when none; the refusal when the request names two. */
  apiKey: string | GatewayError
  origin: string
  referer: string
  /** The User-Agent header ('' when none), read only for a key with a user-agent rule. */
  userAgent: () => string
  /** The client's address, decoded only when an IP is being tracked (it costs a buffer). */
  ip: () => string
  /** The signed token the request carried, as `checkToken` found it; undefined: none. */
  token?: VerifiedToken<KeyContext> | GatewayError
}

/** A request let in: its key, what its plan allows on the network, and the pool its calls go to. */
export interface Admitted {
  readonly key: KeyContext
  readonly network: string
  access: Access
  /** The key's pool: a Private Node account's dedicated node once one is attached, else the shared one. */
  readonly pool: UpstreamPool
  /** The signed token it came with (its end, and how it narrows the key); undefined: the key alone. */
  readonly token: TokenClaims | undefined
}

export interface AdmissionDeps {
  upstreams: Upstreams
  ips: IpDirectory
  keys: KeyDirectory
  pools: PoolSelector
  /** Where refusals by a key's own rules are counted (the usage meter). */
  refusals: KeyRuleSink
  /** Signed tokens: config keys.jwt, and the clock their exp and nbf are read against (default: as the config's defaults, Date.now). */
  tokens?: { audience: string; clockSkewSeconds: number; now?: () => number }
}

/**
 * The one admission of both transports: an HTTP request, a WebSocket upgrade and each WebSocket
 * message pass the same checks in the same order, with the same messages: the network exists,
 * the client's IP is not throttled, the key is valid and its plan active, the request comes from
 * an origin the key allows, from an IP and a user agent the key's rules allow, the plan has some node on the network; and the calls go to the key's
 * pool. (HTTP and WebSocket each had a copy of this, and the copies had diverged: WebSocket calls
 * of Private Node accounts went to the shared nodes.) Every refusal here, and every call the
 * transports refuse before it reaches a node (`refusedCalls`), counts towards the client IP's
 * throttle: an address spraying junk keys, random networks or bad JSON is throttled for every key
 * after `limits.ipThrottle.rejections` of them, as one exceeding rate limits is.
 * @example
 * const admitted = admission.admit({ network, apiKey, origin, referer, userAgent, ip })
 * if (admitted instanceof GatewayError) return refuse(admitted)
 */
export class Admission {
  readonly #deps: AdmissionDeps
  readonly #tokens: TokenVerifier<KeyContext>
  /** When an admitted token ends for an open connection: its exp plus the skew, on this clock. */
  readonly #skewMs: number
  readonly #now: () => number

  constructor(deps: AdmissionDeps) {
    this.#deps = deps
    const { keys } = deps
    const jwt = deps.tokens ?? { audience: 'tollgate', clockSkewSeconds: 30 }
    this.#skewMs = jwt.clockSkewSeconds * 1000
    this.#now = jwt.now ?? Date.now
    this.#tokens = new TokenVerifier<KeyContext>(
      { ownerOf: (keyId) => keys.resolveById(keyId), keysOf: (ctx) => ctx.account.jwtKeys, current: (ctx) => keys.isCurrent(ctx) },
      { audience: jwt.audience, clockSkewSeconds: jwt.clockSkewSeconds, now: this.#now },
    )
  }

  /**
   * The token a request carries (`Authorization: Bearer <JWT>`), checked: synchronously when it
   * was verified before (or is refused by its form), a promise when its signature must be
   * checked. What it gives goes into `admit` as `token`. Transports call it before `admit`
   * (over HTTP while the body arrives; over WebSocket before the upgrade). A throttled address
   * is told so first (admit says it again): a signature check is the dearest thing an unknown
   * client can ask for, and an address throttled for its refusals gets none.
   */
  checkToken(token: string, ip: () => string): VerifiedToken<KeyContext> | GatewayError | Promise<VerifiedToken<KeyContext> | GatewayError> {
    const { ips } = this.#deps
    const throttled = ips.tracking() ? ips.check(ip()) : undefined
    return throttled ?? this.#tokens.check(token)
  }

  /**
   * The network a path's slug names. The spec writes its compression guidance against a second
   * address form, `/http/<network>-http` (and `/ws/<network>-ws` beside it): those are the same
   * network, answered and counted under its own slug. A slug ends in a digit (the config's
   * pattern), so `<slug>-http` never names another network; the suffix is looked at only when
   * the slug as written is not served (the usual path costs the one lookup it did).
   * @example
   * admission.networkOf('eth-1-http', 'http') // 'eth-1' when eth-1 is configured
   */
  networkOf(slug: string, transport: 'http' | 'ws'): string {
    const { upstreams } = this.#deps
    if (upstreams.pool(slug) !== undefined) return slug
    const suffix = transport === 'http' ? '-http' : '-ws'
    if (!slug.endsWith(suffix)) return slug
    const base = slug.slice(0, -suffix.length)
    return upstreams.pool(base) === undefined ? slug : base
  }

  admit(req: AdmissionRequest): Admitted | GatewayError {
    const { upstreams, ips, keys, pools } = this.#deps
    // First: a throttled address is told so whatever it asks, and costs no other lookup.
    const throttled = ips.tracking() ? ips.check(req.ip()) : undefined
    if (throttled) return throttled
    const shared = upstreams.pool(req.network)
    if (shared === undefined) {
      return this.#refused(req, refusal('UNKNOWN_NETWORK_NAMED', { network: req.network, served: upstreams.networks() }))
    }
    if (req.apiKey instanceof GatewayError) return this.#refused(req, req.apiKey)
    const key = this.#keyOf(req)
    if (key instanceof GatewayError) return this.#refused(req, key)
    const token = req.token === undefined ? undefined : (req.token as VerifiedToken<KeyContext>).claims
    if (!originAllowed(key.record.domains, req.origin, req.referer)) {
      return this.#refused(req, refusal('ORIGIN_NOT_ON_KEY', { allowed: key.record.domains!, origin: req.origin, referer: req.referer }))
    }
    // The token's origins narrow the key's: both must let the request through (an empty list lets none).
    if (token?.origins !== undefined && (token.origins.length === 0 || !originAllowed(token.origins, req.origin, req.referer))) {
      return this.#refused(req, refusal('ORIGIN_NOT_IN_TOKEN', { allowed: token.origins, origin: req.origin, referer: req.referer }))
    }
    const restricted = key.record.restrictions === undefined ? undefined : requestRefusal(key.record.restrictions, req)
    if (restricted !== undefined) {
      this.#deps.refusals.keyRuleRefused(key.account.accountId, key.record.keyId, req.network, restricted.rule, 1)
      return this.#refused(req, new GatewayError(restricted.code, restricted.message))
    }
    const access = keys.accessOn(key, req.network)
    if (!access.full && !access.archive) {
      return this.#refused(req, refusal('PLAN_DOES_NOT_COVER', { ...coverageGap(key.plan, key.account.nodes), network: req.network }))
    }
    return { key, network: req.network, access, pool: pools.poolFor(key, req.network) ?? shared, token }
  }

  /**
   * The key a request stands for: the token's when it carries one (a key given beside it must be
   * that one), else the API key's, which must not need a token.
   */
  #keyOf(req: AdmissionRequest): KeyContext | GatewayError {
    const { keys } = this.#deps
    const apiKey = req.apiKey as string
    if (req.token === undefined) {
      const key = keys.resolve(apiKey)
      if (key instanceof GatewayError || key.record.tokenRequired !== true) return key
      return new GatewayError('TOKEN_REQUIRED')
    }
    if (req.token instanceof GatewayError) return req.token
    const key = req.token.owner
    if (apiKey !== '') {
      const named = keys.resolve(apiKey)
      if (named instanceof GatewayError) return named
      if (named !== key) {
        return refusal('TOKEN_SUB_NOT_APIKEY', {})
      }
    }
    // A verification is cached until exp: a key revoked or a plan ended since is refused here.
    return keys.refusalNow(key) ?? key
  }

  /**
   * `calls` calls of this client refused before they reached a node, by a transport (a body or
   * batch too large, bad JSON, an invalid request, a method not served, a WebSocket frame uWS
   * refused): they count towards the IP's throttle as the refusals of `admit` do.
   */
  refusedCalls(ip: () => string, calls: number): void {
    if (calls <= 0) return
    // '': the client went away before its address was read; nobody to throttle.
    const address = ip()
    if (address !== '') this.#deps.ips.rejected(address, calls)
  }

  #refused(req: AdmissionRequest, e: GatewayError): GatewayError {
    this.refusedCalls(req.ip, 1)
    return e
  }

  /**
   * Whether an admitted connection may go on (each WebSocket message, and a periodic check of
   * open connections): the key not revoked, the plan still active, its token not expired, some node still allowed. The
   * access is looked up again, so a plan or node selection changed meanwhile applies at once.
   */
  recheck(admitted: Admitted): GatewayError | undefined {
    const { keys } = this.#deps
    const invalid = keys.refusalNow(admitted.key)
    if (invalid) return invalid
    // A connection opened with a token lives as long as the token: past its exp it is closed (1008).
    if (admitted.token !== undefined && this.#now() > admitted.token.expiresAt + this.#skewMs) {
      return refusal('CONNECTION_TOKEN_EXPIRED', {})
    }
    admitted.access = keys.accessOn(admitted.key, admitted.network)
    if (!admitted.access.full && !admitted.access.archive) {
      return refusal('PLAN_DOES_NOT_COVER', { ...coverageGap(admitted.key.plan, admitted.key.account.nodes), network: admitted.network })
    }
    return undefined
  }
}
