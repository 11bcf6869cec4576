import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js'
import type { Exchanges, ResponseState } from './exchanges.js'
import { drainThen, MAX_REFUSED_BODY } from './request-body.js'
import { sendReply } from './respond.js'
import { ERRORS, errorResponseJson } from '../errors/registry.js'
import { ambiguousLength, refuseAmbiguousLength } from './repeated-headers.js'

/**
 * Register a GET route and its HEAD twin: HEAD gets the same status and headers, with the
 * length of the body and no body (uWS would otherwise send HEAD to the catch-all route).
 */
export function getAndHead(
  app: TemplatedApp,
  exchanges: Exchanges,
  pattern: string,
  handler: (res: HttpResponse, req: HttpRequest, state: ResponseState) => void,
): void {
  app.get(pattern, (res, req) => {
    const state = exchanges.begin(res)
    if (ambiguousLength(req)) return refuseAmbiguousLength(res, state)
    handler(res, req, state)
  })
  app.head(pattern, (res, req) => {
    const state = exchanges.begin(res, true)
    if (ambiguousLength(req)) return refuseAmbiguousLength(res, state)
    handler(res, req, state)
  })
}

/**
 * Every other method on `pattern`: OPTIONS answers 204 with `Allow`, anything else 405 with
 * `Allow` and a JSON-RPC error body (none for HEAD). The request's body is read and dropped first,
 * so the client's connection stays usable for its next request. Register after the route's own
 * methods: uWS matches a method's own route before `any`.
 */
export function otherMethods(app: TemplatedApp, exchanges: Exchanges, pattern: string, allow: readonly string[]): void {
  const allowed = [...allow, 'OPTIONS'].join(', ')
  app.any(pattern, (res, req) => answerOtherMethod(res, req, exchanges, allowed))
}

/** The answer of `otherMethods`, for a route whose allowed methods are known at the call. */
function answerOtherMethod(res: HttpResponse, req: HttpRequest, exchanges: Exchanges, allowed: string): void {
  const method = req.getMethod()
  const state = exchanges.begin(res, method === 'head')
  if (ambiguousLength(req)) return refuseAmbiguousLength(res, state)
  drainThen(res, state, MAX_REFUSED_BODY, (tooLarge) => {
    if (method === 'options') return sendReply(res, state, { status: 204, body: null, headers: { Allow: allowed } }, false)
    const spec = ERRORS.METHOD_NOT_ALLOWED
    const message = `HTTP method ${method.toUpperCase()} not allowed here: this path takes ${allowed}`
    sendReply(res, state, { status: spec.http, body: errorResponseJson('null', spec.rpc, message), headers: { Allow: allowed }, close: tooLarge }, false)
  })
}

/**
 * The catch-all route: 404 NOT_FOUND for any path no other route takes, after reading and
 * dropping the body (so the connection serves the client's next request). Register last.
 */
export function notFoundRoute(app: TemplatedApp, exchanges: Exchanges): void {
  app.any('/*', (res, req) => {
    const state = exchanges.begin(res, req.getMethod() === 'head')
    if (ambiguousLength(req)) return refuseAmbiguousLength(res, state)
    const spec = ERRORS.NOT_FOUND
    drainThen(res, state, MAX_REFUSED_BODY, (tooLarge) =>
      sendReply(res, state, { status: spec.http, body: errorResponseJson('null', spec.rpc, spec.message), close: tooLarge }, false),
    )
  })
}
