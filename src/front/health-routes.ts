import type { HttpResponse, TemplatedApp } from './uws.js'
import type { Exchanges, ResponseState } from './exchanges.js'
import { getAndHead, otherMethods } from './route-methods.js'
import { sendReply } from './respond.js'

/**
 * GET and HEAD /healthz (the process is alive) and /readyz (ready to serve calls: 503 with the
 * reason otherwise), and 405 for their other methods. Both listeners answer them: a load balancer
 * probes the RPC port, an orchestrator or a monitoring system the admin one.
 * @param notReady why the gateway is not ready; undefined when it is
 * @param warnings what the operator must fix that leaves the gateway ready (a node on the wrong
 *   chain), a line each after the first: for the admin listener only, node names are the operator's
 */
export function registerHealthRoutes(
  app: TemplatedApp,
  exchanges: Exchanges,
  notReady: () => string | undefined,
  warnings: () => readonly string[] = () => [],
): void {
  getAndHead(app, exchanges, '/healthz', (res, _req, state) => plainText(res, state, 200, 'ok\n'))
  getAndHead(app, exchanges, '/readyz', (res, _req, state) => {
    const why = notReady()
    const more = warnings().map((w) => `${w}\n`)
    plainText(res, state, why === undefined ? 200 : 503, `${why === undefined ? 'ready' : `not ready: ${why}`}\n${more.join('')}`)
  })
  for (const path of ['/healthz', '/readyz']) otherMethods(app, exchanges, path, ['GET', 'HEAD'])
}

/** A text answer (health, readiness, metrics). */
export function plainText(res: HttpResponse, state: ResponseState, status: number, body: string, contentType = 'text/plain'): void {
  sendReply(res, state, { status, body, contentType }, false)
}
