/**
 * A fast stub JSON-RPC node for benchmarks only (ARCHITECTURE.md: "A stub upstream is for
 * benchmarks only"; tests use real anvil). uWebSockets.js, HTTP POST and WebSocket on one port,
 * canned results by method, the request's id echoed, batches answered as batches. It must never
 * be the bottleneck: answers are prebuilt buffers and only the id is put in per call.
 *
 * Run as its own process: `node --import tsx bench/stub/stub-upstream.ts [port]`; it prints one
 * JSON line `{"ready":true,"port":N}` when it listens.
 */
import { uws, type HttpResponse } from '../../src/front/uws.js'
import { cannedResults } from './canned.js'

const HEAD = Buffer.from('{"jsonrpc":"2.0","id":')
const tails = new Map<string, Buffer>()
for (const [method, result] of Object.entries(cannedResults())) tails.set(method, Buffer.from(`,"result":${result}}`))
const NOT_FOUND_TAIL = Buffer.from(',"error":{"code":-32601,"message":"the stub does not know this method"}}')
const PARSE_ERROR = Buffer.from('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}')

interface Req {
  id?: unknown
  method?: unknown
}

function answerOne(req: Req): Buffer | undefined {
  if (req === null || typeof req !== 'object' || !('id' in req)) return undefined // a notification
  const tail = (typeof req.method === 'string' && tails.get(req.method)) || NOT_FOUND_TAIL
  return Buffer.concat([HEAD, Buffer.from(JSON.stringify(req.id)), tail])
}

const COMMA = Buffer.from(',')
const OPEN = Buffer.from('[')
const CLOSE = Buffer.from(']')

/** The answer to a request text, or undefined when nothing is owed (notifications only). */
export function answer(text: string): Buffer | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return PARSE_ERROR
  }
  if (!Array.isArray(value)) return answerOne(value as Req)
  const parts: Buffer[] = [OPEN]
  for (const req of value) {
    const a = answerOne(req as Req)
    if (a === undefined) continue
    if (parts.length > 1) parts.push(COMMA)
    parts.push(a)
  }
  if (parts.length === 1) return undefined
  parts.push(CLOSE)
  return Buffer.concat(parts)
}

function onPost(res: HttpResponse): void {
  let aborted = false
  res.onAborted(() => {
    aborted = true
  })
  let chunks: Buffer[] = []
  res.onData((chunk, isLast) => {
    chunks.push(Buffer.from(chunk.slice(0)))
    if (!isLast) return
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)
    chunks = []
    const out = answer(body.toString('utf8'))
    if (aborted) return
    res.cork(() => {
      if (out === undefined) {
        res.writeStatus('204 No Content').endWithoutBody()
        return
      }
      res.writeHeader('Content-Type', 'application/json').end(out)
    })
  })
}

const app = uws.App()
app.post('/*', onPost)
app.get('/healthz', (res) => {
  res.end('ok')
})
app.ws('/*', {
  maxPayloadLength: 16 * 1024 * 1024,
  maxBackpressure: 64 * 1024 * 1024,
  idleTimeout: 0,
  message: (ws, message) => {
    const out = answer(Buffer.from(message).toString('utf8'))
    if (out !== undefined) ws.send(out, false)
  },
})

const port = Number(process.argv[2] ?? 0)
app.listen('127.0.0.1', port, (socket) => {
  if (!socket) {
    process.stderr.write(`stub: cannot listen on 127.0.0.1:${port}\n`)
    process.exit(1)
  }
  process.stdout.write(JSON.stringify({ ready: true, port: uws.us_socket_local_port(socket as never) }) + '\n')
})
process.on('SIGTERM', () => process.exit(0))
process.on('SIGINT', () => process.exit(0))
