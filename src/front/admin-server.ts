import { createHash, timingSafeEqual } from 'node:crypto'
import { isIP } from 'node:net'
import type { Registry } from 'prom-client'
import { uws } from './uws.js'
import { Exchanges } from './exchanges.js'
import { Listener } from './listener.js'
import { getAndHead, notFoundRoute, otherMethods } from './route-methods.js'
import { plainText, registerHealthRoutes } from './health-routes.js'
import { sendReply } from './respond.js'
import { GatewayError, errorResponseJson } from '../errors/registry.js'
import { AdminTokenRequiredError } from './errors.js'

export interface AdminServerDeps {
  registry: Registry
  /** The bearer token /metrics requires; undefined: none (a loopback listener only, see adminToken). */
  token: string | undefined
  /** Why the gateway is not ready (the RPC front end's readiness), undefined when it is. */
  notReady: () => string | undefined
  /** What /readyz adds, a line each, without making the gateway unready (nodes on the wrong chain). */
  warnings?: () => readonly string[]
  onError: (err: unknown) => void
}

/**
 * The admin listener (`admin.listen`, loopback by default): /metrics for Prometheus, and /healthz
 * and /readyz as on the RPC port. Kept off the RPC port because what a scrape shows (nodes,
 * traffic, keys in memory) is the operator's, and a scrape's cost should not be anyone's to pay.
 * With a token, /metrics needs `Authorization: Bearer <token>`; the health routes never do
 * (probes carry no secrets).
 */
export class AdminServer extends Listener {
  constructor(deps: AdminServerDeps) {
    const app = uws.App()
    const exchanges = new Exchanges()
    super(app, exchanges, 'admin.listen')
    const expected = deps.token === undefined ? undefined : digest(deps.token)
    registerHealthRoutes(app, exchanges, deps.notReady, deps.warnings)
    getAndHead(app, exchanges, '/metrics', (res, req, state) => {
      if (expected !== undefined && !bearerMatches(req.getHeader('authorization'), expected)) {
        const e = new GatewayError('ADMIN_UNAUTHORIZED')
        return sendReply(res, state, { status: e.http, body: errorResponseJson('null', e.rpc, e.message), headers: { 'WWW-Authenticate': 'Bearer' } }, false)
      }
      deps.registry.metrics().then(
        (text) => plainText(res, state, 200, text, deps.registry.contentType),
        (err: unknown) => {
          deps.onError(err)
          const e = new GatewayError('INTERNAL_ERROR', undefined, { cause: err })
          sendReply(res, state, { status: e.http, body: errorResponseJson('null', e.rpc, e.message) }, false)
        },
      )
    })
    otherMethods(app, exchanges, '/metrics', ['GET', 'HEAD'])
    notFoundRoute(app, exchanges)
  }
}

/**
 * The admin listener's bearer token: TOLLGATE_ADMIN_TOKEN when set (then always required), none
 * on a loopback address without it. A listener reachable from the network must have one, so
 * this refuses to start without it rather than serve /metrics to anyone.
 * @throws AdminTokenRequiredError
 */
export function adminToken(host: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const token = env.TOLLGATE_ADMIN_TOKEN?.trim()
  if (token !== undefined && token !== '') return token
  if (!isLoopback(host)) throw new AdminTokenRequiredError(host)
  return undefined
}

/** 127.0.0.0/8, ::1 (IPv4-mapped included) and `localhost`. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase()
  if (h === 'localhost') return true
  if (isIP(h) === 4) return h.startsWith('127.')
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1' || h.startsWith('::ffff:127.')
  return false
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest()
}

/** Compared as digests in constant time: the answer's timing says nothing about the token. */
function bearerMatches(authorization: string, expected: Buffer): boolean {
  if (authorization.length <= 7 || authorization.slice(0, 7).toLowerCase() !== 'bearer ') return false
  return timingSafeEqual(digest(authorization.slice(7).trim()), expected)
}
