import { gzip } from 'node:zlib'
import { promisify } from 'node:util'
import { availableParallelism } from 'node:os'
import type { HttpResponse } from './uws.js'
import type { ResponseState } from './exchanges.js'

export type { ResponseState } from './exchanges.js'

const gzipAsync = promisify(gzip)

/**
 * Below this size gzip costs more than it saves (headers, CPU); clients that asked for gzip get
 * the plain body, which HTTP allows (no Content-Encoding header).
 */
export const GZIP_MIN_BYTES = 1024

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  202: '202 Accepted',
  204: '204 No Content',
  304: '304 Not Modified',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  402: '402 Payment Required',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  408: '408 Request Timeout',
  409: '409 Conflict',
  413: '413 Payload Too Large',
  426: '426 Upgrade Required',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  502: '502 Bad Gateway',
  503: '503 Service Unavailable',
  504: '504 Gateway Timeout',
}

/**
 * A body in pieces (a node's answer with the client's id spliced into its head): sent one after
 * the other, joined only to compress it.
 */
export type BodyChunks = readonly Buffer[]

export interface Reply {
  status: number
  body: string | Buffer | BodyChunks | null
  contentType?: string
  headers?: Readonly<Record<string, string>>
  /** Close the connection after answering (a body we refused to read is still on the wire). */
  close?: boolean
}

/**
 * Write a reply, gzip-compressed when the client accepts it and it is worth it. Compression runs
 * on libuv's thread pool (zlib's async API), so a 1 MB response never blocks the event loop for
 * other clients.
 */
export function sendReply(res: HttpResponse, state: ResponseState, reply: Reply, acceptGzip: boolean): void {
  if (reply.body !== null && acceptGzip && lengthOf(reply.body) >= GZIP_MIN_BYTES) {
    const body = Array.isArray(reply.body) ? Buffer.concat(reply.body) : (reply.body as string | Buffer)
    compress(body).then(
      (zipped) => write(res, state, reply, zipped, true),
      () => write(res, state, reply, body, false),
    )
    return
  }
  write(res, state, reply, reply.body, false)
}

/**
 * Compressions running at once: as many as the machine has cores. zlib runs on libuv's pool
 * (4 threads by default); with 2 cores, 4 threads compressing 1 MB answers at once starved the
 * event loop of CPU and every other client waited (bench/README.md, gzip-isolation). Beyond
 * this, compressions queue: large gzip answers wait, small calls do not. (One fewer than the
 * cores halved gzip throughput on 2 cores for little gain in latency.)
 */
const GZIP_CONCURRENCY = Math.max(1, availableParallelism())
let gzipRunning = 0
const gzipQueue: Array<() => void> = []

async function compress(body: string | Buffer): Promise<Buffer> {
  // A finishing compression hands its slot straight to the next in the queue.
  if (gzipRunning >= GZIP_CONCURRENCY) await new Promise<void>((resolve) => gzipQueue.push(resolve))
  else gzipRunning++
  try {
    return await gzipAsync(body)
  } finally {
    const next = gzipQueue.shift()
    if (next) next()
    else gzipRunning--
  }
}

function write(res: HttpResponse, state: ResponseState, reply: Reply, body: string | Buffer | BodyChunks | null, gzipped: boolean): void {
  if (state.aborted || state.done) return
  state.done = true
  // While the front end drains, every answer closes its connection: the client's next call
  // opens a new one, which reaches another instance.
  const close = reply.close === true || state.exchanges.draining
  let streaming = false
  res.cork(() => {
    res.writeStatus(STATUS_TEXT[reply.status] ?? `${reply.status} Unknown`)
    if (body !== null) res.writeHeader('Content-Type', reply.contentType ?? 'application/json')
    if (gzipped) res.writeHeader('Content-Encoding', 'gzip')
    if (body !== null && reply.contentType === undefined) res.writeHeader('Vary', 'Accept-Encoding')
    if (reply.headers) for (const k in reply.headers) res.writeHeader(k, reply.headers[k])
    if (body === null || state.head) {
      // endWithoutBody() must be called without arguments: undefined is taken as a length of
      // 2^63, and any length leaves the answer waiting for that many bytes, so uWS aborts the
      // process as if the handler had returned without answering. A 204 has no Content-Length
      // (RFC 9110 §8.6); a HEAD has the length of the body a GET would get, written by hand.
      if (body !== null) res.writeHeader('Content-Length', String(typeof body === 'string' ? Buffer.byteLength(body) : lengthOf(body)))
      if (close) res.writeHeader('Connection', 'close')
      res.endWithoutBody()
    } else if (typeof body !== 'string' && lengthOf(body) >= STREAM_MIN_BYTES && !close) {
      streaming = streamBody(res, state, Array.isArray(body) ? body : [body as Buffer])
    } else {
      res.end(Array.isArray(body) ? Buffer.concat(body) : (body as string | Buffer), close)
    }
  })
  if (!streaming) state.exchanges.ended(state)
}

/**
 * Above this size a body goes out with tryEnd/onWritable: what the socket does not take at once
 * stays in our buffer and is sent from an offset when the socket drains. With end(), uWS would
 * copy the unsent part of a 1 MB answer into its own buffer first.
 */
const STREAM_MIN_BYTES = 64 * 1024

/**
 * Send the chunks as far as the socket takes them; true while the rest waits for the socket to
 * drain. Inside the cork of the headers, the first chunk joins them in uWS's buffer and the next
 * one goes out with them in one system call.
 */
function streamBody(res: HttpResponse, state: ResponseState, chunks: BodyChunks): boolean {
  const total = lengthOf(chunks)
  const start = res.getWriteOffset()
  // The chunk being sent, and the body offset where it begins.
  let k = 0
  let from = 0
  /** Send from body offset `sent` on; whether the socket took everything. */
  const sendFrom = (sent: number): boolean => {
    while (k < chunks.length && from + chunks[k].length <= sent) from += chunks[k++].length
    while (k < chunks.length) {
      const [ok, done] = res.tryEnd(sent === from ? chunks[k] : chunks[k].subarray(sent - from), total)
      if (done) return true
      if (!ok) return false
      from += chunks[k++].length
      sent = from
    }
    return true
  }
  if (sendFrom(0)) return false
  res.onWritable((offset) => {
    if (state.aborted) return true
    const finished = sendFrom(offset - start)
    if (finished) state.exchanges.ended(state)
    return finished
  })
  return true
}

function lengthOf(body: string | Buffer | BodyChunks): number {
  if (!Array.isArray(body)) return (body as string | Buffer).length
  let n = 0
  for (const c of body) n += c.length
  return n
}
