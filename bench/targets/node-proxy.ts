/**
 * The "plain Node proxy" rival: what a team would write in an afternoon with node:http and an
 * undici Pool. It checks the key against a set (as cheap as a check can be), forwards the body
 * untouched and returns the node's bytes; gzip with zlib's async API (libuv's thread pool) when
 * the client accepts it, like the gateway. No JSON parsing, no metering, no per-key limits.
 *
 * Run as its own process: `node --import tsx bench/targets/node-proxy.ts '{"upstream":"http://…","keys":["…"]}'`;
 * prints `{"ready":true,"port":N}`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { gzip } from 'node:zlib'
import { Pool } from 'undici'
import { answerControlCommands } from './control.js'

interface ProxyOptions {
  upstream: string
  keys: string[]
  port?: number
  /** undici sockets to the upstream (default 50, one per wrk connection). */
  connections?: number
}

const opts = JSON.parse(process.argv[2] ?? '{}') as ProxyOptions
const keys = new Set(opts.keys)
const upstream = new URL(opts.upstream)
const pool = new Pool(upstream.origin, { connections: opts.connections ?? 50, pipelining: 1, keepAliveTimeout: 30_000 })

function reply(res: ServerResponse, status: number, body: Buffer, gzipped: boolean): void {
  const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': body.length }
  if (gzipped) headers['content-encoding'] = 'gzip'
  res.writeHead(status, headers)
  res.end(body)
}

function onRequest(req: IncomingMessage, res: ServerResponse): void {
  const q = req.url!.indexOf('?apikey=')
  const key = q < 0 ? '' : req.url!.slice(q + 8)
  if (req.method !== 'POST' || !keys.has(key)) {
    req.resume()
    reply(res, 401, Buffer.from('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"bad key"}}'), false)
    return
  }
  const chunks: Buffer[] = []
  req.on('data', (c: Buffer) => chunks.push(c))
  req.on('end', () => {
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)
    pool
      .request({ method: 'POST', path: upstream.pathname, headers: { 'content-type': 'application/json' }, body })
      .then(async (up) => {
        const out = Buffer.from(await up.body.arrayBuffer())
        if (out.length >= 1024 && /\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) {
          gzip(out, (err, zipped) => (err ? reply(res, up.statusCode, out, false) : reply(res, up.statusCode, zipped, true)))
        } else {
          reply(res, up.statusCode, out, false)
        }
      })
      .catch(() => reply(res, 502, Buffer.from('{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"upstream failed"}}'), false))
  })
}

const server = createServer({ keepAliveTimeout: 60_000 }, onRequest)
server.listen(opts.port ?? 0, '127.0.0.1', () => {
  const address = server.address()
  process.stdout.write(JSON.stringify({ ready: true, port: typeof address === 'object' && address ? address.port : 0 }) + '\n')
  answerControlCommands()
})
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
