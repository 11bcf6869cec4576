import { Pool, type Dispatcher } from 'undici'
import { DEFAULT_MAX_UPSTREAM_BYTES, UpstreamAnswerTooLarge, UpstreamTimeout, UpstreamTransportError } from './errors.js'
import { answerShape, describeShape, sampleOf } from './answer-shape.js'

export interface HttpTransportOptions {
  /** Sockets kept open to the node (default 16). */
  connections?: number
  /**
   * Requests in flight per socket (default 1). docs/architecture.md measured 32k → 51k rps with 16,
   * but a slow answer then holds up the ones queued behind it on the same socket.
   */
  pipelining?: number
  /** Name used in errors (default: host:port of the URL). */
  name?: string
  /** Largest answer read, in bytes (default 32 MiB, limits.maxUpstreamBytes); a larger one fails the call. */
  maxBytes?: number
}

/** Connection errors after which the node cannot have seen a single byte of the request. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
  'UND_ERR_DESTROYED',
])

/**
 * JSON-RPC over HTTP POST to one node, on a keep-alive undici Pool.
 * @example
 * const http = new HttpTransport('http://127.0.0.1:8545', { pipelining: 16 })
 * const text = await http.call('{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}', 5000)
 */
export class HttpTransport {
  readonly url: string
  readonly name: string
  readonly #pool: Pool
  readonly #path: string
  readonly #maxBytes: number

  constructor(url: string, opts: HttpTransportOptions = {}) {
    const parsed = new URL(url)
    this.url = url
    this.name = opts.name ?? parsed.host
    this.#path = parsed.pathname + parsed.search
    this.#maxBytes = opts.maxBytes ?? DEFAULT_MAX_UPSTREAM_BYTES
    this.#pool = new Pool(parsed.origin, {
      connections: opts.connections ?? 16,
      pipelining: opts.pipelining ?? 1,
      keepAliveTimeout: 30_000,
      // Our own per-call time-out aborts first; these only bound a call nobody waits for.
      headersTimeout: 0,
      bodyTimeout: 0,
    })
  }

  /**
   * POST `body` and resolve with the response text. A non-2xx answer with a JSON body is the
   * node's JSON-RPC answer and resolves too; anything else rejects.
   * @throws UpstreamTimeout no complete answer within `timeoutMs`
   * @throws UpstreamTransportError connection refused or reset, an empty, non-JSON or truncated body
   * @throws UpstreamAnswerTooLarge an answer over `maxBytes`
   */
  async call(body: string, timeoutMs: number): Promise<string> {
    return (await this.callBytes(body, timeoutMs)).toString('utf8')
  }

  /**
   * call(), resolving with the response body as bytes (nothing decoded). Uses undici's dispatch
   * API rather than request(): no body stream per call, which the profile of HTTP-only upstreams
   * showed as a large part of a small call's cost (bench/README.md).
   */
  callBytes(body: string, timeoutMs: number): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      let controller: Dispatcher.DispatchController | undefined
      let timedOut = false
      let settled = false
      let status = 0
      let type: string | string[] | undefined
      const chunks: Buffer[] = []
      let size = 0
      // Every failure ends here; one of ours (an UpstreamTransportError) passes through #failure as it is.
      const fail = (err: unknown): void => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        reject(this.#failure(err, timedOut, timeoutMs, status, size))
      }
      // The time-out covers the whole answer, not only its first byte: a node that sends one byte
      // a second is as useless as one that sends nothing. Aborting a request on a pipelined socket
      // resets that socket and fails the calls queued on it; that is wanted: they sit behind an
      // answer that is not coming and would time out anyway.
      const timer = setTimeout(() => {
        timedOut = true
        if (controller) controller.abort(new Error(`no answer within ${timeoutMs} ms`))
        // Still queued in the pool: answer now; the request is aborted if it ever starts.
        else fail(new Error('queued past the time-out'))
      }, timeoutMs)
      this.#pool.dispatch(
        { method: 'POST', path: this.#path, headers: { 'content-type': 'application/json' }, body },
        {
          onRequestStart: (c) => {
            controller = c
            if (timedOut) c.abort(new Error(`no answer within ${timeoutMs} ms`))
          },
          onResponseStart: (c, statusCode, headers) => {
            status = statusCode
            type = headers['content-type']
            // Stop reading an answer over the limit at once: the socket is reset rather than
            // drained, so a node sending 50 MB costs us no more than the limit.
            const length = Number(headers['content-length'])
            if (length > this.#maxBytes) this.#refuse(c, fail, length)
          },
          onResponseData: (c, chunk) => {
            if (settled) return
            size += chunk.length
            if (size > this.#maxBytes) return this.#refuse(c, fail)
            chunks.push(chunk)
          },
          onResponseEnd: () => {
            if (settled) return
            const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)
            const shape = answerShape(bytes)
            if (shape === 'json') {
              settled = true
              clearTimeout(timer)
              return resolve(bytes)
            }
            const what = `HTTP ${status} with ${describeShape(shape, bytes)}${type !== undefined && shape === 'not-json' ? ` of type ${String(type).split(';')[0]}` : ''}`
            fail(new UpstreamTransportError(what, { node: this.name, requestSent: true, sample: bytes.length > 0 ? sampleOf(bytes) : undefined }))
          },
          onResponseError: (_c, err) => fail(err),
        },
      )
    })
  }

  /** An answer over the limit: the call fails with UpstreamAnswerTooLarge and the request is aborted. */
  #refuse(c: Dispatcher.DispatchController, fail: (err: Error) => void, size?: number): void {
    const err = new UpstreamAnswerTooLarge({ node: this.name, limit: this.#maxBytes, size })
    fail(err)
    c.abort(err)
  }

  #failure(err: unknown, timedOut: boolean, timeoutMs: number, status: number, received: number): Error {
    if (err instanceof UpstreamTransportError) return err
    if (timedOut) return new UpstreamTimeout({ node: this.name, timeoutMs, received, cause: err })
    const code = (err as { code?: string }).code ?? ''
    const what = describeSocketError(code, (err as Error).message)
    return new UpstreamTransportError(status === 0 ? what : `${what} (HTTP ${status}, after ${received} bytes of the body)`, {
      node: this.name,
      requestSent: !NOT_SENT_CODES.has(code),
      cause: err,
    })
  }

  /**
   * Close the sockets, and cut the calls still in flight. The gateway closes its nodes after the
   * front end drained (every client's call answered or cut at shutdownMs): what is left is only
   * the losing side of a hedge or a consensus, whose client has its answer. Waiting for those
   * (undici's close()) let a node that never answers hold the process past shutdownMs.
   */
  async close(): Promise<void> {
    await this.#pool.destroy()
  }
}

/** A connection failure in words (what the node or the network did), with undici's code for searching. */
function describeSocketError(code: string, message: string): string {
  const words = SOCKET_ERRORS[code] ?? (code.startsWith('HPE_') ? 'an answer that is not valid HTTP' : undefined)
  if (words === undefined) return code || message
  return `${words} (${code})`
}

const SOCKET_ERRORS: Readonly<Record<string, string>> = {
  ECONNRESET: 'the connection was reset',
  UND_ERR_SOCKET: 'the connection was closed before the answer was complete',
  EPIPE: 'the connection was closed while the call was sent',
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found (DNS)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'no connection within the connect time-out',
}
