import { registerStaticFiles } from './static-files.js'
import type { HttpRequest, HttpResponse, TemplatedApp } from '../front/uws.js'
import { sendReply } from '../front/respond.js'
import type { Exchanges, ResponseState } from '../front/exchanges.js'
import { drainThen, MAX_REFUSED_BODY } from '../front/request-body.js'
import { otherMethods } from '../front/route-methods.js'
import { ambiguousLength, refuseAmbiguousLength } from '../front/repeated-headers.js'
import { clientIp } from '../front/http-rpc-route.js'
import { ApiError, toApiError } from './api-errors.js'
import { cookieValue, sessionCookie } from './session-cookie.js'
import type { ApiLimitName } from './api-limits.js'
import type { DashboardService, Session } from './dashboard-service.js'

/** Largest API request body: a SIWE message and signature (an ERC-6492 one carries init code). */
const MAX_API_BODY = 64 * 1024

interface ApiCall {
  /** The client's IP address (X-Forwarded-For's last address with trustProxy). */
  ip: string
  params: string[]
  query: URLSearchParams
  body: Record<string, unknown>
  session: Session | undefined
}
interface ApiAnswer {
  status?: number
  json: unknown
  setCookie?: string
  headers?: Readonly<Record<string, string>>
}
type Handler = (call: ApiCall, service: DashboardService) => Promise<ApiAnswer> | ApiAnswer

interface RouteSpec {
  method: 'get' | 'post' | 'put'
  path: string
  /** Needs a signed-in session. */
  auth: boolean
  /** The rate limit of this kind of call (besides `api`, which every call counts against). */
  limit?: ApiLimitName
  handler: Handler
}

const ROUTES: RouteSpec[] = [
  { method: 'get', path: '/api/config', auth: false, handler: (_c, s) => ({ json: s.publicConfig() }) },
  { method: 'post', path: '/api/siwe/nonce', auth: false, handler: (_c, s) => ({ json: s.nonce() }) },
  {
    method: 'post',
    path: '/api/siwe/verify',
    auth: false,
    limit: 'signIn',
    handler: async (c, s) => {
      const out = await s.signIn(c.body, c.ip)
      // Until the session ends (the message's Expiration Time may end it before sessionTtlMs).
      const maxAgeS = Math.floor((out.expiresAt - s.now()) / 1000)
      return { json: { accountId: out.accountId, expiresAt: out.expiresAt }, setCookie: sessionCookie(s.cookie, out.token, maxAgeS) }
    },
  },
  {
    method: 'post',
    path: '/api/siwe/logout',
    auth: false,
    handler: async (c, s) => {
      if (c.session) await s.signOut(c.session)
      return { json: { signedOut: true }, setCookie: sessionCookie(s.cookie, '', 0) }
    },
  },
  {
    method: 'get',
    path: '/api/session',
    auth: false,
    // 200 either way: the page asks this first, so a signed-out visitor sees no failed request.
    handler: (c) => ({
      json: c.session ? { signedIn: true, accountId: c.session.accountId, wallet: c.session.wallet, expiresAt: c.session.expiresAt } : { signedIn: false },
    }),
  },
  { method: 'get', path: '/api/me', auth: true, handler: (c, s) => s.me(c.session!).then((json) => ({ json })) },
  { method: 'post', path: '/api/plans', auth: true, limit: 'invoices', handler: (c, s) => s.choosePlan(c.session!, c.body).then((json) => ({ json })) },
  {
    method: 'post',
    path: '/api/invoices/:id/payment',
    auth: true,
    limit: 'paymentChecks',
    handler: (c, s) => s.pay(c.session!, c.params[0]!, c.body).then((json) => ({ json })),
  },
  { method: 'post', path: '/api/keys/regenerate', auth: true, limit: 'keys', handler: (c, s) => s.regenerate(c.session!, c.body).then((json) => ({ json })) },
  { method: 'put', path: '/api/keys/domains', auth: true, limit: 'keys', handler: (c, s) => s.setDomains(c.session!, c.body).then((json) => ({ json })) },
  {
    method: 'put',
    path: '/api/keys/restrictions',
    auth: true,
    limit: 'keys',
    handler: (c, s) => s.setRestrictions(c.session!, c.body).then((json) => ({ json })),
  },
  // Signed tokens: the account's public keys, and whether its key needs a token (docs/keys.md).
  { method: 'post', path: '/api/keys/jwt', auth: true, limit: 'keys', handler: (c, s) => s.addJwtKey(c.session!, c.body).then((json) => ({ json })) },
  { method: 'post', path: '/api/keys/jwt/remove', auth: true, limit: 'keys', handler: (c, s) => s.removeJwtKey(c.session!, c.body).then((json) => ({ json })) },
  {
    method: 'put',
    path: '/api/keys/token-required',
    auth: true,
    limit: 'keys',
    handler: (c, s) => s.setTokenRequired(c.session!, c.body).then((json) => ({ json })),
  },
  { method: 'get', path: '/api/usage', auth: true, handler: (c, s) => s.usage(c.session!, c.query.get('hours')).then((json) => ({ json })) },
]

/**
 * The dashboard's JSON API under /api/. Answers are JSON; errors are `{ "error": { code,
 * message, details? } }` with the status of API_ERRORS. The session is an HttpOnly, SameSite=Strict
 * cookie, `__Host-` and Secure but on plain http on loopback (see session-cookie.ts). Calls that change something must be JSON from
 * our own origin: a form or a script on another site cannot send `Content-Type: application/json`
 * without a CORS preflight we never grant, and the Origin check refuses it when present.
 *
 * Every call counts against its IP's `api` limit, and some against a limit of their kind, per IP
 * and per account (dashboard.limits, see api-limits.ts): 429 RATE_LIMITED with Retry-After.
 */
function registerApiRoutes(app: TemplatedApp, exchanges: Exchanges, service: () => DashboardService | undefined, onError: (err: unknown) => void): void {
  const allowed = new Map<string, string[]>()
  for (const route of ROUTES) {
    const methods = allowed.get(route.path) ?? []
    methods.push(route.method.toUpperCase(), ...(route.method === 'get' ? ['HEAD'] : []))
    allowed.set(route.path, methods)
    const handle = (res: HttpResponse, req: HttpRequest, state: ResponseState): void => {
      const params = route.path.includes(':') ? [req.getParameter(0) ?? ''] : []
      const query = new URLSearchParams(req.getQuery() ?? '')
      const cookie = req.getHeader('cookie')
      const origin = req.getHeader('origin')
      const fetchSite = req.getHeader('sec-fetch-site')
      const contentType = req.getHeader('content-type')
      const ip = clientIp(res, req, service()?.trustProxy ?? false)
      const answer = (a: ApiAnswer): void => {
        const headers: Record<string, string> = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', ...a.headers }
        if (a.setCookie !== undefined) headers['Set-Cookie'] = a.setCookie
        sendReply(res, state, { status: a.status ?? 200, body: JSON.stringify(a.json), contentType: 'application/json; charset=utf-8', headers }, false)
      }
      const failWith = (err: unknown): void => {
        const e = toApiError(err)
        if (e.code === 'INTERNAL') onError(err)
        answer({ status: e.http, json: { error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) } }, headers: e.headers })
      }
      const run = async (rawBody: string | null): Promise<void> => {
        const s = service()
        if (s === undefined) throw new ApiError('DASHBOARD_DISABLED', 'The dashboard is not available: the gateway runs without TOLLGATE_SECRET.')
        s.limits.take('api', { ip })
        if (route.method !== 'get') {
          if (!contentType.toLowerCase().startsWith('application/json')) throw new ApiError('WRONG_ORIGIN', 'Send JSON (Content-Type: application/json).')
          if ((origin !== '' && origin !== s.origin) || (fetchSite !== '' && fetchSite !== 'same-origin' && fetchSite !== 'none')) {
            throw new ApiError('WRONG_ORIGIN', `This request must come from the dashboard at ${s.origin}.`)
          }
        }
        let body: Record<string, unknown> = {}
        if (rawBody !== null && rawBody.trim() !== '') {
          try {
            body = JSON.parse(rawBody) as Record<string, unknown>
          } catch {
            throw new ApiError('BAD_REQUEST', 'The request body is not JSON.')
          }
          if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ApiError('BAD_REQUEST', 'The request body must be a JSON object.')
        }
        const session = await s.session(cookieValue(cookie, s.cookie.name))
        if (route.auth && session === undefined) throw new ApiError('NOT_SIGNED_IN')
        // Per account only where the account is the caller's: a sign-in's is the wallet it names (see signIn).
        if (route.limit !== undefined) s.limits.take(route.limit, { ip, accountId: route.auth ? session?.accountId : undefined })
        answer(await route.handler({ ip, params, query, body, session }, s))
      }
      if (route.method === 'get') {
        run(null).catch(failWith)
        return
      }
      readSmallBody(res, state, MAX_API_BODY, (body) => {
        if (body === null) return failWith(new ApiError('BAD_REQUEST', 'The request body is too large.'))
        run(body).catch(failWith)
      })
    }
    const begin = (res: HttpResponse, req: HttpRequest, head: boolean): void => {
      const state = exchanges.begin(res, head)
      if (ambiguousLength(req)) return refuseAmbiguousLength(res, state)
      handle(res, req, state)
    }
    app[route.method](route.path, (res, req) => begin(res, req, false))
    if (route.method === 'get') app.head(route.path, (res, req) => begin(res, req, true))
  }
  for (const [path, methods] of allowed) otherMethods(app, exchanges, path, methods)
  app.any('/api/*', (res, req) => {
    const state = exchanges.begin(res, req.getMethod() === 'head')
    if (ambiguousLength(req)) return refuseAmbiguousLength(res, state)
    const e = new ApiError('NOT_FOUND')
    drainThen(res, state, MAX_REFUSED_BODY, (tooLarge) =>
      sendReply(
        res,
        state,
        {
          status: e.http,
          body: JSON.stringify({ error: { code: e.code, message: e.message } }),
          contentType: 'application/json; charset=utf-8',
          close: tooLarge,
        },
        false,
      ),
    )
  })
}

function readSmallBody(res: HttpResponse, state: ResponseState, max: number, done: (body: string | null) => void): void {
  const chunks: Buffer[] = []
  let size = 0
  let over = false
  res.onData((chunk, isLast) => {
    if (over) return
    size += chunk.byteLength
    if (size > max) {
      over = true
      return done(null)
    }
    chunks.push(Buffer.from(chunk.slice(0)))
    if (isLast && !state.aborted) done(Buffer.concat(chunks).toString('utf8'))
  })
}

/**
 * The dashboard's pages, for the HTTP server's `pages` hook: its JSON API under /api/ and its
 * static files at /.
 * @param staticDir folder of the built dashboard; undefined: not built (/ says so)
 */
export function dashboardPages(
  service: () => DashboardService | undefined,
  staticDir: string | undefined,
  onError: (err: unknown) => void,
): (app: TemplatedApp, exchanges: Exchanges) => void {
  return (app, exchanges) => {
    registerApiRoutes(app, exchanges, service, onError)
    registerStaticFiles(app, exchanges, staticDir)
  }
}
