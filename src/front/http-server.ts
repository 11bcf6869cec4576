import { uws, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.js'
import { registerHttpRpcRoute, type HttpRpcRouteDeps } from './http-rpc-route.js'
import { sendReply, type ResponseState } from './respond.js'
import { ERRORS, errorResponseJson } from '../errors/registry.js'
import type { Metrics } from '../metrics/metrics.js'
import { CORS_HEADERS, CORS_PREFLIGHT_HEADERS } from './cors.js'
import type { DashboardService } from '../dashboard/dashboard-service.js'
import { registerApiRoutes } from '../dashboard/api-routes.js'
import { registerStaticFiles } from '../dashboard/static-files.js'

export interface HttpServerDeps extends HttpRpcRouteDeps {
  metrics: Metrics
  /** Ready: listening and the projections caught up with the event log. */
  ready: () => boolean
  /** Routes of other parts (the WebSocket endpoint), registered before the catch-all ones. */
  routes?: (app: TemplatedApp) => void
  /** The dashboard: its JSON API under /api/ and its static files at / (absent: neither). */
  dashboard?: DashboardRoutes
}

export interface DashboardRoutes {
  service: () => DashboardService | undefined
  /** Folder of the built dashboard; undefined: not built (/ says so). */
  staticDir: string | undefined
}

/** The uWS app with every route of the gateway; `listen` binds only what the config says. */
export class HttpServer {
  readonly app: TemplatedApp
  #listenSocket: us_listen_socket | undefined
  #listening = false

  constructor(deps: HttpServerDeps) {
    const app = uws.App()
    this.app = app
    registerHttpRpcRoute(app, deps)
    deps.routes?.(app)
    app.get('/healthz', (res) => plain(res, 200, 'ok\n'))
    app.get('/readyz', (res) => {
      const ok = this.#listening && deps.ready()
      plain(res, ok ? 200 : 503, ok ? 'ready\n' : 'not ready: projections are catching up with the event log\n')
    })
    app.get('/metrics', (res) => plain(res, 200, deps.metrics.render(), 'text/plain; version=0.0.4'))
    // CORS preflight of a browser dApp: JSON and Authorization make every cross-origin call preflighted.
    app.options('/http/:network', (res) => {
      const state: ResponseState = { aborted: false, done: false }
      sendReply(res, state, { status: 204, body: null, headers: { ...CORS_HEADERS, ...CORS_PREFLIGHT_HEADERS } }, false)
    })
    app.any('/http/:network', (res) => jsonError(res, 'METHOD_NOT_ALLOWED', { Allow: 'POST' }))
    if (deps.dashboard) {
      registerApiRoutes(app, deps.dashboard.service, deps.onError)
      registerStaticFiles(app, deps.dashboard.staticDir)
    }
    app.any('/*', (res) => jsonError(res, 'NOT_FOUND'))
  }

  /** Listen on host:port (port 0: a free port). Resolves with the port bound. */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(host, port, (socket) => {
        if (!socket) return reject(new Error(`cannot listen on ${host}:${port}: the port is taken or the address is not local; change "listen" in the config`))
        this.#listenSocket = socket
        this.#listening = true
        resolve(uws.us_socket_local_port(socket as never))
      })
    })
  }

  /** Stop accepting connections (requests in flight still complete). */
  close(): void {
    if (this.#listenSocket) uws.us_listen_socket_close(this.#listenSocket)
    this.#listenSocket = undefined
    this.#listening = false
  }
}

function plain(res: HttpResponse, status: number, body: string, contentType = 'text/plain'): void {
  const state: ResponseState = { aborted: false, done: false }
  sendReply(res, state, { status, body, contentType }, false)
}

function jsonError(res: HttpResponse, code: 'NOT_FOUND' | 'METHOD_NOT_ALLOWED', headers?: Record<string, string>): void {
  const spec = ERRORS[code]
  const state: ResponseState = { aborted: false, done: false }
  // The request body, if any, is not read: close so that it is not taken for the next request.
  sendReply(res, state, { status: spec.http, body: errorResponseJson('null', spec.rpc, spec.message), headers, close: true }, false)
}
