import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js'
import { sendReply, type Reply, type ResponseState } from './respond.js'
import { GatewayError, errorResponseJson } from '../errors/registry.js'
import { parseRpcBody } from '../rpc/parse.js'
import type { RpcDispatcher } from '../gateway/rpc-dispatcher.js'
import type { KeyDirectory } from '../gateway/key-directory.js'
import type { Upstreams } from '../upstream/upstreams.js'
import type { HttpCounters } from './http-counters.js'
import type { IpDirectory } from '../gateway/ip-directory.js'
import type { PoolSelector } from '../gateway/pool-selector.js'
import { originAllowed } from '../keys/domain-allowlist.js'
import { CORS_HEADERS } from './cors.js'

export interface HttpRpcRouteDeps {
  keys: KeyDirectory
  upstreams: Upstreams
  dispatcher: RpcDispatcher
  maxBodyBytes: number
  counters: HttpCounters
  ips: IpDirectory
  pools: PoolSelector
  /** Take the client IP from X-Forwarded-For (behind a trusted reverse proxy). */
  trustProxy: boolean
  onError: (err: unknown) => void
}

/**
 * POST /http/<network>: one JSON-RPC request or a batch. The key comes from `?apikey=` or
 * `Authorization: Bearer`. Everything needed from `req` is copied synchronously (uWS frees it
 * when the handler returns) and `onAborted` is attached before the first asynchronous step.
 */
export function registerHttpRpcRoute(app: TemplatedApp, deps: HttpRpcRouteDeps): void {
  app.post('/http/:network', (res: HttpResponse, req: HttpRequest) => {
    const state: ResponseState = { aborted: false, done: false }
    res.onAborted(() => {
      state.aborted = true
    })
    const network = req.getParameter(0)
    const apiKey = keyFrom(req)
    const acceptGzip = req.getHeader('accept-encoding').includes('gzip')
    const declaredLength = Number(req.getHeader('content-length') || '0')
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

    if (!deps.upstreams.pool(network)) {
      return drainThen(res, state, deps.maxBodyBytes, () =>
        fail(new GatewayError('UNKNOWN_NETWORK', `Unknown network ${JSON.stringify(network.slice(0, 40))}: this gateway serves ${deps.upstreams.networks().join(', ')}`)),
      )
    }
    if (declaredLength > deps.maxBodyBytes) {
      // Refuse before reading: the body is still on the wire, so the connection is closed after the answer.
      return fail(tooLarge(declaredLength, deps.maxBodyBytes), true)
    }
    const throttled = deps.ips.tracking() ? deps.ips.check(ipOf()) : undefined
    if (throttled) return drainThen(res, state, deps.maxBodyBytes, () => fail(throttled))
    const key = deps.keys.resolve(apiKey)
    if (key instanceof GatewayError) return drainThen(res, state, deps.maxBodyBytes, () => fail(key))
    const access = deps.keys.accessOn(key, network)
    // A Private Node account's calls go to its dedicated node once one is attached.
    const pool = deps.pools.poolFor(key, network)!
    if (!originAllowed(key.record.domains, origin, referer)) {
      const from = origin || referer || 'no Origin or Referer header'
      return drainThen(res, state, deps.maxBodyBytes, () =>
        fail(new GatewayError('ORIGIN_NOT_ALLOWED', `Forbidden: this key may only be used from ${key.record.domains!.join(', ')} (the request came from ${from.slice(0, 100)}); change the allowlist in the dashboard`)),
      )
    }

    readBody(res, state, deps.maxBodyBytes, (body, bytes) => {
      if (body === null) return fail(tooLarge(undefined, deps.maxBodyBytes), true)
      const parsed = parseRpcBody(body)
      deps.dispatcher.dispatch({ key, access, network, pool, bytesIn: bytes, ip: ipOf }, parsed).then(
        (answer) => {
          deps.counters.answered(network, answer.status)
          const headers = cors === undefined ? answer.headers : { ...cors, ...answer.headers }
          // The node's bytes when they were kept: nothing decoded or encoded again on the way out.
          const reply: Reply = { status: answer.status, body: answer.bytes ?? answer.body, headers }
          sendReply(res, state, reply, acceptGzip)
        },
        (err: unknown) => {
          deps.onError(err)
          fail(new GatewayError('INTERNAL_ERROR', undefined, { cause: err }))
        },
      )
    })
  })
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

/** The API key of a request: `?apikey=` first, then `Authorization: Bearer <key>`. */
export function keyFrom(req: HttpRequest): string {
  const q = req.getQuery('apikey')
  if (q) return q
  const auth = req.getHeader('authorization')
  if (auth.length > 7 && auth.slice(0, 7).toLowerCase() === 'bearer ') return auth.slice(7).trim()
  return ''
}

function tooLarge(size: number | undefined, max: number): GatewayError {
  const what = size === undefined ? 'more than' : `${size} bytes;`
  return new GatewayError('BODY_TOO_LARGE', `Request body too large: ${what} at most ${max} bytes are accepted; split the batch or the call`)
}

/**
 * Collect the body as UTF-8 text. Chunks before the last are copied (uWS neuters them after the
 * callback); the last one is decoded before the callback returns, so it needs no copy. `null` when
 * the body grows past `max`: a client sending without Content-Length cannot make us buffer without
 * bound.
 */
function readBody(res: HttpResponse, state: ResponseState, max: number, done: (body: string | null, bytes: number) => void): void {
  let chunks: Buffer[] | null = []
  let size = 0
  res.onData((chunk, isLast) => {
    if (chunks === null) return
    size += chunk.byteLength
    if (size > max) {
      chunks = null
      return done(null, size)
    }
    if (isLast) {
      const last = Buffer.from(chunk)
      const text = chunks.length === 0 ? last.toString('utf8') : Buffer.concat([...chunks, last]).toString('utf8')
      chunks = null
      if (!state.aborted) done(text, size)
    } else {
      chunks.push(Buffer.from(chunk.slice(0)))
    }
  })
}

/** Read and drop the body, then answer: keeps the connection usable for the client's next request. */
function drainThen(res: HttpResponse, state: ResponseState, max: number, answer: () => void): void {
  let size = 0
  let answered = false
  res.onData((chunk, isLast) => {
    if (answered) return
    size += chunk.byteLength
    if (isLast || size > max) {
      answered = true
      if (!state.aborted) answer()
    }
  })
}
