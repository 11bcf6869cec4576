import { Pool, type Dispatcher } from 'undici'
import { UpstreamTimeout, UpstreamTransportError } from './errors.js'

export interface HttpTransportOptions {
  /** Sockets kept open to the node (default 16). */
  connections?: number
  /**
   * Requests in flight per socket (default 1). ARCHITECTURE.md measured 32k → 51k rps with 16,
   * but a slow answer then holds up the ones queued behind it on the same socket.
   */
  pipelining?: number
  /** Name used in errors (default: host:port of the URL). */
  name?: string
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

  constructor(url: string, opts: HttpTransportOptions = {}) {
    const parsed = new URL(url)
    this.url = url
    this.name = opts.name ?? parsed.host
    this.#path = parsed.pathname + parsed.search
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
   * @throws UpstreamTransportError connection refused or reset, non-JSON body
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
      const chunks: Buffer[] = []
      let size = 0
      const fail = (err: unknown): void => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        reject(this.#failure(err, timedOut, timeoutMs))
      }
      // Aborting a request on a pipelined socket resets that socket and fails the calls queued on
      // it; that is wanted: they sit behind an answer that is not coming and would time out anyway.
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
          onResponseStart: (_c, statusCode) => {
            status = statusCode
          },
          onResponseData: (_c, chunk) => {
            chunks.push(chunk)
            size += chunk.length
          },
          onResponseEnd: () => {
            if (settled) return
            settled = true
            clearTimeout(timer)
            const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)
            if (looksLikeJson(bytes)) return resolve(bytes)
            reject(
              new UpstreamTransportError(`HTTP ${status} with a non-JSON body: ${bytes.toString('utf8', 0, 240).slice(0, 80)}`, {
                node: this.name,
                requestSent: true,
              }),
            )
          },
          onResponseError: (_c, err) => fail(err),
        },
      )
    })
  }

  #failure(err: unknown, timedOut: boolean, timeoutMs: number): Error {
    if (err instanceof UpstreamTransportError) return err
    if (timedOut) return new UpstreamTimeout({ node: this.name, timeoutMs, cause: err })
    const code = (err as { code?: string }).code ?? ''
    return new UpstreamTransportError(`${code || (err as Error).message}`, {
      node: this.name,
      requestSent: !NOT_SENT_CODES.has(code),
      cause: err,
    })
  }

  /** Close the sockets; calls in flight are allowed to finish. */
  async close(): Promise<void> {
    await this.#pool.close()
  }
}

/** A JSON-RPC answer is an object or a batch array; a proxy's error page is neither. */
function looksLikeJson(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]
    if (c === 0x7b || c === 0x5b) return true
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return false
  }
  return false
}
