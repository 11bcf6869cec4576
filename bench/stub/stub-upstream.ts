/**
 * A fast stub JSON-RPC node for benchmarks only (docs/architecture.md: "A stub node exists only
 * in bench/"; tests use real anvil). uWebSockets.js, HTTP POST and WebSocket on one port,
 * canned results by method, the request's id echoed, batches answered as batches. It must never
 * be the bottleneck: answers are prebuilt buffers and only the id is put in per call.
 *
 * Run as its own process: `node --import tsx bench/stub/stub-upstream.ts [port] [behaviour]`; it prints
 * one JSON line `{"ready":true,"port":N}` when it listens. The behaviour (bench/upstream-scenarios.ts)
 * is a delay in ms for every answer (a slow node), or JSON `{"workers":4,"slow":{"debug_traceCall":250}}`:
 * a node's RPC server with that many workers, each request holding one for the longest delay of
 * its methods, the rest queued in arrival order.
 */
import { uws, type HttpResponse } from '../../src/front/uws.js'
import { cannedResults } from './canned.js'

/** How the stub behaves (argv[3]): a delay for every answer, or workers and slow methods. */
const BEHAVIOUR = parseBehaviour(process.argv[3])
const DELAY_MS = BEHAVIOUR.delayMs

function parseBehaviour(arg: string | undefined): { delayMs: number; workers?: number; slow: Record<string, number> } {
  if (arg === undefined || /^\d+$/.test(arg)) return { delayMs: Number(arg ?? 0), slow: {} }
  const b = JSON.parse(arg) as { workers?: number; slow?: Record<string, number> }
  return { delayMs: 0, workers: b.workers, slow: b.slow ?? {} }
}

/** Workers busy, and requests waiting for one (BEHAVIOUR.workers). */
let busy = 0
const queue: Array<() => void> = []

/** Run `send` as the node would: in a worker, after the longest delay of the request's methods. */
function inWorker(text: string, send: () => void): void {
  const workers = BEHAVIOUR.workers
  if (workers === undefined) return send()
  let ms = 0
  for (const [method, delay] of Object.entries(BEHAVIOUR.slow)) if (delay > ms && text.includes(`"${method}"`)) ms = delay
  const run = (): void => {
    busy++
    setTimeout(() => {
      send()
      busy--
      const next = queue.shift()
      if (next) next()
    }, ms)
  }
  if (busy < workers) run()
  else queue.push(run)
}
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
    const text = body.toString('utf8')
    const out = answer(text)
    const send = (): void => {
      if (aborted) return
      res.cork(() => {
        if (out === undefined) {
          res.writeStatus('204 No Content').endWithoutBody()
          return
        }
        res.writeHeader('Content-Type', 'application/json').end(out)
      })
    }
    if (DELAY_MS > 0) setTimeout(send, DELAY_MS)
    else inWorker(text, send)
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
    const text = Buffer.from(message).toString('utf8')
    const out = answer(text)
    if (out === undefined) return
    if (DELAY_MS > 0) setTimeout(() => ws.send(out, false), DELAY_MS)
    else inWorker(text, () => ws.send(out, false))
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
