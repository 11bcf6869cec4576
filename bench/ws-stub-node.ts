/**
 * A stub EVM node for the WebSocket benchmarks (never for tests: docs/architecture.md, "Real parts
 * in tests"): JSON-RPC over HTTP and WebSocket on uWS, canned answers, and `newHeads`
 * subscriptions fed with a head every `--head-ms` (default 500) while anyone subscribes. Each head
 * carries `sentAt` (ms since the epoch, fractional) so that a client can time its delivery.
 * Prints `{"port":…}` on stdout once listening.
 *
 * Run: node --import tsx bench/ws-stub-node.ts [--head-ms 500]
 */
import { uws, type WebSocket } from '../src/front/uws.js'

const headMs = Number(process.argv[process.argv.indexOf('--head-ms') + 1] || 500)
let block = 0x100
let nextSub = 1
interface Conn {
  subs: Set<string>
}
const subscribers = new Set<WebSocket<Conn>>()

function answer(text: string): string {
  let req: { id?: unknown; method?: string; params?: unknown[] }
  try {
    req = JSON.parse(text)
  } catch {
    return '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}'
  }
  const id = JSON.stringify(req.id ?? null)
  const ok = (result: string) => `{"jsonrpc":"2.0","id":${id},"result":${result}}`
  switch (req.method) {
    case 'eth_chainId':
      return ok('"0x1"')
    case 'eth_blockNumber':
      return ok(`"0x${block.toString(16)}"`)
    case 'net_version':
      return ok('"1"')
    default:
      return `{"jsonrpc":"2.0","id":${id},"error":{"code":-32601,"message":"the stub does not know this method"}}`
  }
}

const app = uws.App()
app.post('/', (res) => {
  let body = ''
  res.onAborted(() => {})
  res.onData((chunk, last) => {
    body += Buffer.from(chunk).toString()
    if (last) res.cork(() => res.writeHeader('Content-Type', 'application/json').end(answer(body)))
  })
})
app.ws<Conn>('/*', {
  maxPayloadLength: 1 << 20,
  idleTimeout: 0,
  maxBackpressure: 64 << 20,
  upgrade: (res, req, ctx) =>
    res.upgrade(
      { subs: new Set() },
      req.getHeader('sec-websocket-key'),
      req.getHeader('sec-websocket-protocol'),
      req.getHeader('sec-websocket-extensions'),
      ctx,
    ),
  message: (ws, data) => {
    const text = Buffer.from(data).toString()
    const req = JSON.parse(text) as { id?: unknown; method?: string; params?: unknown[] }
    if (req.method === 'eth_subscribe' && req.params?.[0] === 'newHeads') {
      const sub = `0x${(nextSub++).toString(16).padStart(32, '0')}`
      ws.getUserData().subs.add(sub)
      subscribers.add(ws)
      ws.send(`{"jsonrpc":"2.0","id":${JSON.stringify(req.id)},"result":"${sub}"}`)
      return
    }
    if (req.method === 'eth_unsubscribe') {
      const had = ws.getUserData().subs.delete(String(req.params?.[0]))
      ws.send(`{"jsonrpc":"2.0","id":${JSON.stringify(req.id)},"result":${had}}`)
      return
    }
    ws.send(answer(text))
  },
  close: (ws) => subscribers.delete(ws),
})

setInterval(() => {
  if (subscribers.size === 0) return
  block++
  const sentAt = performance.timeOrigin + performance.now()
  const head = `{"number":"0x${block.toString(16)}","hash":"0x${block.toString(16).padStart(64, '0')}","parentHash":"0x${(block - 1).toString(16).padStart(64, '0')}","timestamp":"0x${Math.floor(sentAt / 1000).toString(16)}","sentAt":${sentAt}}`
  for (const ws of subscribers) {
    ws.cork(() => {
      for (const sub of ws.getUserData().subs) ws.send(`{"jsonrpc":"2.0","method":"eth_subscription","params":{"subscription":"${sub}","result":${head}}}`)
    })
  }
}, headMs)

app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) throw new Error('stub: cannot listen')
  console.log(JSON.stringify({ port: uws.us_socket_local_port(socket as never) }))
})
