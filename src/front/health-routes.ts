import type { HttpResponse, TemplatedApp } from './uws.js'
import type { Exchanges, ResponseState } from './exchanges.js'
import { getAndHead, otherMethods } from './route-methods.js'
import { sendReply } from './respond.js'

/**
 * GET and HEAD /healthz (the process is alive) and /readyz (ready to serve calls: 503 with the
 * reason otherwise), and 405 for their other methods. Both listeners answer them: a load balancer
 * probes the RPC port, an orchestrator or a monitoring system the admin one.
 * @param notReady why the gateway is not ready; undefined when it is
 */
export function registerHealthRoutes(app: TemplatedApp, exchanges: Exchanges, notReady: () => string | undefined): void {
  getAndHead(app, exchanges, '/healthz', (res, _req, state) => plainText(res, state, 200, 'ok\n'))
  getAndHead(app, exchanges, '/readyz', (res, _req, state) => {
    const why = notReady()
    plainText(res, state, why === undefined ? 200 : 503, why === undefined ? 'ready\n' : `not ready: ${why}\n`)
  })
  for (const path of ['/healthz', '/readyz']) otherMethods(app, exchanges, path, ['GET', 'HEAD'])
}

/** A text answer (health, readiness, metrics). */
export function plainText(res: HttpResponse, state: ResponseState, status: number, body: string, contentType = 'text/plain'): void {
  sendReply(res, state, { status, body, contentType }, false)
}
