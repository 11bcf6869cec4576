import type { HttpRequest, HttpResponse } from './uws.js'
import type { ResponseState } from './exchanges.js'
import { sendReply } from './respond.js'
import { GatewayError, errorResponseJson } from '../errors/registry.js'

/**
 * Headers a request must not repeat. uWS's `getHeader` gives the first of a name and says nothing
 * of the others, so a request with two `Content-Length` headers had its body cut at the first one:
 * behind a proxy that reads the other one, the rest of the body is taken for a new request on the
 * same connection (request smuggling), and that request reaches us with the proxy's trust. Two
 * `Authorization` headers naming two keys were served with the first: the client cannot know which
 * key is charged. `Content-Length` together with `Transfer-Encoding` never reaches a handler: uWS
 * closes that connection itself, without an answer.
 *
 * The scan walks every header once (uWS makes a string of each name and value): it is the one
 * check of a well-formed call that costs per header, measured in the commit that added it.
 */
export type RepeatedHeader = 'content-length' | 'authorization' | undefined

// One scan at a time (handlers run synchronously on one thread): module state instead of an
// object or a closure per request.
let lengths = 0
let firstAuthorization: string | undefined
let conflictingAuthorization = false

function visit(name: string, value: string): void {
  if (name === 'content-length') lengths++
  else if (name === 'authorization') {
    if (firstAuthorization === undefined) firstAuthorization = value
    else if (value !== firstAuthorization) conflictingAuthorization = true
  }
}

/**
 * The first header this request repeats where it must not: `content-length` when it has two or
 * more (equal or not: RFC 9112, 6.3 lets a server refuse them, and a proxy may not have merged
 * them), `authorization` when two differ (the same one twice is the same key, and served).
 */
export function repeatedHeader(req: HttpRequest): RepeatedHeader {
  lengths = 0
  firstAuthorization = undefined
  conflictingAuthorization = false
  req.forEach(visit)
  firstAuthorization = undefined
  if (lengths > 1) return 'content-length'
  return conflictingAuthorization ? 'authorization' : undefined
}

/** Whether the request has two or more `Content-Length` headers (for routes that take no key). */
export function ambiguousLength(req: HttpRequest): boolean {
  return repeatedHeader(req) === 'content-length'
}

/**
 * The answer to an ambiguous length: 400, and the connection closed, as its body cannot be told
 * from what follows. It is written on the next turn, not in the handler: uWS v20.30 goes on
 * parsing what the same read brought after the body, and an answer ended "close" in the handler
 * was followed by an answer to the request hidden in the body, on a connection left open. With
 * the answer pending, uWS instead aborts the exchange and closes the socket when such a request
 * follows (nothing is answered, nothing served); when none follows, the 400 goes out and the
 * connection closes.
 */
export function refuseAmbiguousLength(res: HttpResponse, state: ResponseState): void {
  const e = new GatewayError('AMBIGUOUS_LENGTH')
  setImmediate(() => sendReply(res, state, { status: e.http, body: errorResponseJson('null', e.rpc, e.message), close: true }, false))
}
