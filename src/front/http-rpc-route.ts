import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js'
import { sendReply, type Reply } from './respond.js'
import type { Exchanges, ResponseState } from './exchanges.js'
import { drainThen } from './request-body.js'
import { refusal } from '../errors/messages.js'
import { GatewayError, errorResponseJson } from '../errors/registry.js'
import { parseRpcBytes } from '../rpc/parse.js'
import type { RpcDispatcher } from '../gateway/rpc-dispatcher.js'
import type { KeyDirectory } from '../gateway/key-directory.js'
import type { HttpCounters } from './http-counters.js'
import type { Admission, Admitted } from '../gateway/admission.js'
import { looksLikeToken } from '../gateway/token-verifier.js'
import { CORS_HEADERS } from './cors.js'
import { BodyDeadlines, type PendingBody } from './body-deadlines.js'
import { refuseAmbiguousLength, repeatedHeader, type RepeatedHeader } from './repeated-headers.js'

export interface HttpRpcRouteDeps {
  /** Network, IP throttle, key, origin, plan access and the key's pool: the same for WebSocket. */
  admission: Admission
  /** For the CORS preflight, which names a key but is not a call. */
  keys: KeyDirectory
  /** The calls' method rules, charge and forward, as calls over HTTP (src/gateway/call-policies.ts). */
  dispatcher: RpcDispatcher
  maxBodyBytes: number
  /** How long the body may take to arrive after the headers (`limits.bodyTimeoutMs`). */
  bodyTimeoutMs: number
  counters: HttpCounters
  /** Take the client IP from X-Forwarded-For (behind a trusted reverse proxy). */
  trustProxy: boolean
  onError: (err: unknown) => void
  /** The front end's open exchanges (graceful shutdown waits for them). */
  exchanges: Exchanges
}

/**
 * POST /http/<network>: one JSON-RPC request or a batch. The key comes from `?apikey=` or
 * `Authorization: Bearer`. Everything needed from `req` is copied synchronously (uWS frees it
 * when the handler returns) and `onAborted` is attached before the first asynchronous step.
 */
export function registerHttpRpcRoute(app: TemplatedApp, deps: HttpRpcRouteDeps): void {
  const deadlines = new BodyDeadlines<RequestState>(deps.bodyTimeoutMs, (state) => bodyLate(state, deps.bodyTimeoutMs))
  app.post('/http/:network', (res: HttpResponse, req: HttpRequest) => {
    const declaredLength = Number(req.getHeader('content-length') || '0')
    const state: RequestState = deps.exchanges.begin(res, false, {
      bodyDone: false,
      dueSweep: 0,
      bodyBytes: 0,
      declaredLength,
      refusal: undefined,
      fail: undefined,
    })
    // Before anything is read: with two lengths, where this body ends is not known.
    const repeated = repeatedHeader(req)
    const network = deps.admission.networkOf(req.getParameter(0), 'http')
    if (repeated === 'content-length') {
      deps.counters.answered(network, 400)
      deps.admission.refusedCalls(() => clientIp(res, req, deps.trustProxy), 1)
      return refuseAmbiguousLength(res, state)
    }
    const { apiKey, token } = credentialsFrom(req, repeated)
    const acceptGzip = req.getHeader('accept-encoding').includes('gzip')
    // The client's address is decoded only when something needs it (an IP is being tracked, or a
    // rate limit rejects): uWS makes a new ArrayBuffer for it, which was 5% of a small call's CPU.
    // The forwarded-for header is read now, as `req` is gone when the handler returns; `res`
    // stays valid until the answer is sent or the client aborts.
    let ip: string | undefined = deps.trustProxy ? forwardedIp(req) : undefined
    const ipOf = (): string => (ip ??= state.aborted ? '' : decoder.decode(res.getRemoteAddressAsText()))
    const origin = req.getHeader('origin')
    const referer = req.getHeader('referer')
    // Browsers (a dApp calling us from its own origin) read the answer only with CORS headers.
    const cors = origin === '' ? undefined : CORS_HEADERS

    const fail = (e: GatewayError, close = false): void => {
      deps.counters.answered(network, e.http)
      const headers = cors === undefined ? e.headers : { ...cors, ...e.headers }
      sendReply(res, state, { status: e.http, body: errorResponseJson('null', e.rpc, e.message), headers, close }, acceptGzip)
    }
    state.fail = fail

    if (declaredLength > deps.maxBodyBytes) {
      // Refuse before reading: the body is still on the wire, so the connection is closed after the answer.
      deps.admission.refusedCalls(ipOf, 1)
      return fail(refusal('BODY_OVER_LIMIT', { size: declaredLength, max: deps.maxBodyBytes }), true)
    }
    const checked = token === '' ? undefined : deps.admission.checkToken(token, ipOf)
    if (checked instanceof Promise) {
      // A token not seen before: its signature is checked while the body arrives (the body must be
      // read from now on, as uWS drops what comes before onData). `req` is gone by then: copied.
      const userAgent = req.getHeader('user-agent')
      readBody(res, state, deps.maxBodyBytes, (body, bytes) => {
        if (body === null) {
          deps.admission.refusedCalls(ipOf, 1)
          return fail(refusal('BODY_OVER_LIMIT', { max: deps.maxBodyBytes }), true)
        }
        const parsed = parseRpcBytes(body)
        checked.then(
          (verified) => {
            if (state.aborted) return
            const admitted = deps.admission.admit({ network, apiKey, origin, referer, userAgent: () => userAgent, ip: ipOf, token: verified })
            if (admitted instanceof GatewayError) return fail(admitted)
            dispatch(admitted, parsed, bytes)
          },
          (err: unknown) => {
            deps.onError(err)
            fail(new GatewayError('INTERNAL_ERROR', undefined, { cause: err }))
          },
        )
      })
      deadlines.track(state)
      return
    }
    const admitted = deps.admission.admit({ network, apiKey, origin, referer, userAgent: () => req.getHeader('user-agent'), ip: ipOf, token: checked })
    if (admitted instanceof GatewayError) return refuseAfterBody(res, state, deps.maxBodyBytes, deadlines, admitted)

    readBody(res, state, deps.maxBodyBytes, (body, bytes) => {
      if (body === null) {
        deps.admission.refusedCalls(ipOf, 1)
        return fail(refusal('BODY_OVER_LIMIT', { max: deps.maxBodyBytes }), true)
      }
      // Parsed before this returns: `body` may be a view of uWS's buffer, which it reuses afterwards.
      dispatch(admitted, parseRpcBytes(body), bytes)
    })
    deadlines.track(state)

    function dispatch(admitted: Admitted, parsed: ReturnType<typeof parseRpcBytes>, bytes: number): void {
      const { key, access, pool } = admitted
      const ctx = { key, access, network, pool, bytesIn: bytes, ip: ipOf, transport: 'http' as const, token: admitted.token?.narrowing }
      deps.dispatcher.dispatch(ctx, parsed).then(
        (answer) => {
          // Refused whole by its charge (429 with Retry-After and RateLimit-*, or 403): the typed error, answered as every refusal is.
          if (answer.refusal !== undefined) return fail(answer.refusal)
          deps.counters.answered(network, answer.status)
          // Bad JSON, invalid requests, methods not served, a batch over maxBatch: refused before a node.
          if (answer.invalid) deps.admission.refusedCalls(ipOf, answer.invalid)
          const headers = cors === undefined ? answer.headers : { ...cors, ...answer.headers }
          // The node's bytes when they were kept: nothing decoded or encoded again on the way out.
          const body = answer.body
          const reply: Reply = { status: answer.status, body: body === null || typeof body === 'string' ? body : (body.bytes ?? body.text), headers }
          sendReply(res, state, reply, acceptGzip)
        },
        (err: unknown) => {
          deps.onError(err)
          fail(new GatewayError('INTERNAL_ERROR', undefined, { cause: err }))
        },
      )
    }
  })
}

/**
 * What a request's handlers share: its answer's state and its body's progress, which is also
 * what the body time-out reads (one object per request, nothing more allocated to watch it).
 */
interface RequestState extends ResponseState, PendingBody {
  /** Body bytes received so far. */
  bodyBytes: number
  /** The Content-Length announced (0: none). */
  declaredLength: number
  /** The answer already decided while the body is drained (a bad key…); undefined while it is read for the call. */
  refusal: GatewayError | undefined
  /** Answers with an error (and closes the connection when asked). */
  fail: ((e: GatewayError, close?: boolean) => void) | undefined
}

/**
 * A body still not in after the time-out: the refusal already decided, else 408; either way the
 * connection is closed, as the rest of the body may still come.
 */
function bodyLate(state: RequestState, timeoutMs: number): void {
  if (state.refusal !== undefined) return state.fail?.(state.refusal, true)
  state.fail?.(refusal('BODY_LATE', { bodyBytes: state.bodyBytes, declaredLength: state.declaredLength, timeoutMs }), true)
}

/** Read and drop the body, then answer `e`: the connection stays usable for the client's next request. */
function refuseAfterBody(res: HttpResponse, state: RequestState, max: number, deadlines: BodyDeadlines<RequestState>, e: GatewayError): void {
  state.refusal = e
  drainThen(res, state, max, (tooLarge) => state.fail?.(e, tooLarge))
  deadlines.track(state)
}

const decoder = new TextDecoder()

/**
 * The client's IP: the socket's peer, or behind a trusted reverse proxy the last address of
 * X-Forwarded-For (the one the proxy itself appended; earlier ones are the client's to forge).
 */
export function clientIp(res: HttpResponse, req: HttpRequest, trustProxy: boolean): string {
  return (trustProxy ? forwardedIp(req) : undefined) ?? decoder.decode(res.getRemoteAddressAsText())
}

/** The last address of X-Forwarded-For, when there is one. */
function forwardedIp(req: HttpRequest): string | undefined {
  const xff = req.getHeader('x-forwarded-for')
  if (!xff) return undefined
  const last = xff.slice(xff.lastIndexOf(',') + 1).trim()
  return last || undefined
}

/**
 * The API key of a request, from `?apikey=` or `Authorization: Bearer <key>`, and the signed token
 * it carries instead (`Authorization: Bearer <JWT>`, told from a key by its dots; '' none). The
 * same key may be given twice (in both places, or twice in one); a request that names two
 * different keys is refused rather than one silently chosen, since the client cannot know which
 * of its keys it is being charged to (a key beside a token must be the token's: Admission).
 * `repeated`: what `repeatedHeader` found in this request (two different `Authorization` headers
 * are seen only by that scan, as `getHeader` gives the first).
 */
export function credentialsFrom(req: HttpRequest, repeated: RepeatedHeader): { apiKey: string | GatewayError; token: string } {
  const q = queryKey(req)
  if (q instanceof GatewayError) return { apiKey: q, token: '' }
  if (repeated === 'authorization') return { apiKey: refusal('KEY_NAMED_TWICE', { twice: 'Authorization headers' }), token: '' }
  const auth = req.getHeader('authorization')
  const bearer = auth.length > 7 && auth.slice(0, 7).toLowerCase() === 'bearer ' ? auth.slice(7).trim() : ''
  if (looksLikeToken(bearer)) return { apiKey: q, token: bearer }
  if (q !== '' && bearer !== '' && q !== bearer) return { apiKey: new GatewayError('CONFLICTING_KEYS'), token: '' }
  return { apiKey: q || bearer, token: '' }
}

/**
 * `?apikey=`: '' when absent; refused when given twice with different keys. Read from the query
 * text the handler has anyway: asking uWS for the one parameter as well was a second native call
 * (and string) on every request. A value with percent-escapes or `+` is left to uWS to decode.
 */
function queryKey(req: HttpRequest): string | GatewayError {
  const query = req.getQuery()
  if (query === undefined) return ''
  const first = query.indexOf('apikey=')
  if (first === -1) return ''
  // A second one is rare: only then is the query parsed whole (`xapikey=` is told apart there).
  if (query.indexOf('apikey=', first + 7) !== -1) {
    if (new Set(new URLSearchParams(query).getAll('apikey')).size > 1) return refusal('KEY_NAMED_TWICE', { twice: '?apikey=' })
    return req.getQuery('apikey') ?? ''
  }
  // `xapikey=` is another parameter.
  if (first > 0 && query.charCodeAt(first - 1) !== 38 /* & */) return ''
  const end = query.indexOf('&', first + 7)
  const value = end === -1 ? query.slice(first + 7) : query.slice(first + 7, end)
  return value.includes('%') || value.includes('+') ? (req.getQuery('apikey') ?? '') : value
}

/**
 * Collect the body. Chunks before the last are copied (uWS neuters them after the callback); the
 * last one is handed over as a view of uWS's buffer, valid until `done` returns, so a body that
 * came in one piece is never copied. `null` when the body grows past `max`: a client sending
 * without Content-Length cannot make us buffer without bound.
 */
function readBody(res: HttpResponse, state: RequestState, max: number, done: (body: Buffer | null, bytes: number) => void): void {
  let chunks: Buffer[] | null = []
  let size = 0
  res.onData((chunk, isLast) => {
    if (chunks === null || state.bodyDone) return
    size += chunk.byteLength
    state.bodyBytes = size
    if (size > max) {
      chunks = null
      state.bodyDone = true
      return done(null, size)
    }
    if (isLast) {
      const last = Buffer.from(chunk)
      const body = chunks.length === 0 ? last : Buffer.concat([...chunks, last])
      chunks = null
      state.bodyDone = true
      if (!state.aborted) done(body, size)
    } else {
      chunks.push(Buffer.from(chunk.slice(0)))
    }
  })
}
