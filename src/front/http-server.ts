import { uws, type HttpResponse, type TemplatedApp } from './uws.js'
import { registerHttpRpcRoute, credentialsFrom, type HttpRpcRouteDeps } from './http-rpc-route.js'
import { sendReply } from './respond.js'
import { Exchanges, type ResponseState } from './exchanges.js'
import { refusal } from '../errors/messages.js'
import { GatewayError, errorResponseJson } from '../errors/registry.js'
import { CORS_HEADERS, CORS_PREFLIGHT_HEADERS } from './cors.js'
import { originAllowed } from '../keys/domain-allowlist.js'
import { notFoundRoute, otherMethods } from './route-methods.js'
import { drainThen, MAX_REFUSED_BODY } from './request-body.js'
import { registerHealthRoutes } from './health-routes.js'
import { Listener, type ListenOptions } from './listener.js'
import { refuseAmbiguousLength, repeatedHeader } from './repeated-headers.js'

export interface HttpServerDeps extends Omit<HttpRpcRouteDeps, 'exchanges'> {
  /** Ready: listening and the projections caught up with the event log. */
  ready: () => boolean
  /** Routes of other parts (the WebSocket endpoint), registered before the health routes. */
  routes?: (app: TemplatedApp, exchanges: Exchanges) => void
  /**
   * Pages of other parts (the dashboard: its JSON API under /api/ and its files at /), registered
   * after the health routes and before the catch-all 404. Handed in, as `routes` are: the front
   * end serves them without knowing what they are.
   */
  pages?: (app: TemplatedApp, exchanges: Exchanges) => void
}

/**
 * The uWS app with every route of the gateway; `listen` binds only what the config says. Every
 * route answers every method: its own, HEAD where it serves GET, OPTIONS, and 405 with `Allow`
 * for the rest (a request uWS's parser does not know, such as an unknown method, is closed by
 * uWS itself without an answer).
 */
export class HttpServer {
  readonly app: TemplatedApp
  /** Exchanges still open, and whether the front end drains (graceful shutdown). */
  readonly exchanges = new Exchanges()
  readonly #listener: Listener

  constructor(deps: HttpServerDeps) {
    const app = uws.App()
    const exchanges = this.exchanges
    this.app = app
    this.#listener = new Listener(app, exchanges, 'listen')
    registerHttpRpcRoute(app, { ...deps, exchanges })
    // CORS preflight of a browser dApp: JSON and Authorization make every cross-origin call preflighted.
    app.options('/http/:network', (res, req) => {
      const state = exchanges.begin(res)
      const repeated = repeatedHeader(req)
      if (repeated === 'content-length') return refuseAmbiguousLength(res, state)
      const key = credentialsFrom(req, repeated).apiKey
      // Conflicting keys are answered by the call itself; a preflight just names none then.
      preflight(res, state, req.getHeader('origin'), typeof key === 'string' ? key : '', deps)
    })
    otherMethods(app, exchanges, '/http/:network', ['POST'])
    deps.routes?.(app, exchanges)
    // /metrics is on the admin listener (src/front/admin-server.ts): here it is an unknown path.
    registerHealthRoutes(app, exchanges, () => this.notReady())
    deps.pages?.(app, exchanges)
    notFoundRoute(app, exchanges)
    this.#ready = deps.ready
  }

  readonly #ready: () => boolean

  /** Listening, not draining, and the rest of the gateway ready. */
  get ready(): boolean {
    return this.#listener.listening && !this.exchanges.draining && this.#ready()
  }

  /** Why the gateway is not ready (the text of /readyz), undefined when it is. */
  notReady(): string | undefined {
    if (this.ready) return undefined
    return this.exchanges.draining ? 'draining (shutting down)' : 'projections are catching up with the event log'
  }

  /** Listen on host:port (port 0: a free port), alone unless `opts.shared` (a worker). Resolves with the port bound. */
  listen(host: string, port: number, opts?: ListenOptions): Promise<number> {
    return this.#listener.listen(host, port, opts)
  }

  /**
   * Begin a graceful stop: /readyz says 503, the listen socket closes (no new connections), and
   * every answer from now on closes its connection. Calls in flight, and calls that arrive on
   * kept-alive connections meanwhile, are answered normally.
   */
  drain(): void {
    this.#listener.drain()
  }

  /** Close every socket left (idle keep-alive connections); call when the exchanges are idle. */
  close(): void {
    this.#listener.close()
  }
}

/**
 * The answer to a CORS preflight. Any origin may call a key that has no domain allowlist (keys,
 * not cookies, authenticate); when the preflight names a key (`?apikey=`) that is restricted to
 * other domains, it gets 403 without CORS headers, so the browser stops before sending the key.
 */
function preflight(res: HttpResponse, state: ResponseState, origin: string, apiKey: string, deps: HttpServerDeps): void {
  const headers: Record<string, string> = { ...CORS_HEADERS, ...CORS_PREFLIGHT_HEADERS }
  if (apiKey !== '' && origin !== '') {
    const key = deps.keys.resolve(apiKey)
    if (!(key instanceof GatewayError) && key.record.domains !== undefined && key.record.domains.length > 0) {
      if (!originAllowed(key.record.domains, origin, '')) {
        const e = refusal('PREFLIGHT_ORIGIN_NOT_ON_KEY', { allowed: key.record.domains })
        return drainThen(res, state, MAX_REFUSED_BODY, (tooLarge) =>
          sendReply(res, state, { status: e.http, body: errorResponseJson('null', e.rpc, e.message), close: tooLarge }, false),
        )
      }
      headers['Access-Control-Allow-Origin'] = origin
      headers.Vary = 'Origin'
    }
  }
  drainThen(res, state, MAX_REFUSED_BODY, (tooLarge) => sendReply(res, state, { status: 204, body: null, headers, close: tooLarge }, false))
}
