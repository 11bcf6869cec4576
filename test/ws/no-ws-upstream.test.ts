import { Writable } from 'node:stream'
import pino from 'pino'
import t from 'tap'
import { startAnvils } from '../helpers/anvil-gateway.js'
import { startTestGateway } from '../helpers/gateway.js'
import { metric } from '../helpers/metrics.js'
import { connectWs } from '../helpers/ws-client.js'

// A network none of whose nodes has a WebSocket can never serve eth_subscribe: the client is told
// which setting is missing (not "retry with backoff", which no retry can satisfy), the refusal is
// counted, and the operator is warned when the gateway starts. A network with a ws node beside it
// subscribes as before and is not warned of.

const [anvil] = await startAnvils(t, {})
const lines: Array<{ msg: string; network?: string }> = []
const logger = pino(
  { level: 'warn' },
  new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line))
      done()
    },
  }),
)
const tg = await startTestGateway(t, {
  networks: {
    'httponly-1': { chainId: 31337, upstreams: [{ url: anvil!.url, kind: 'full' }] },
    'withws-1': { chainId: 31337, upstreams: [{ url: anvil!.url, ws: anvil!.wsUrl, kind: 'full' }] },
  },
  logger,
})
const { apiKey } = await tg.createKey('tier-3')
const subscribe = { jsonrpc: '2.0', id: 's', method: 'eth_subscribe', params: ['newHeads'] }

t.test('eth_subscribe without a ws node: an error that names the configuration, counted', async (t) => {
  const ws = await connectWs(`${tg.wsUrl('httponly-1')}?apikey=${apiKey}`)
  t.teardown(() => ws.close())
  const r = await ws.call(subscribe)
  t.equal(r.error?.code, -32035, 'NO_WS_UPSTREAM')
  t.match(r.error?.message, /networks\.httponly-1\.upstreams\[\]\.ws/, 'names the setting')
  t.notMatch(r.error?.message, /retry/, 'does not tell the client to retry')
  t.equal(await metric(tg.gateway.admin, 'tollgate_ws_subscribe_refused_total', { network: 'httponly-1', reason: 'no-ws-upstream' }), 1)
  t.equal((await ws.call({ jsonrpc: '2.0', id: 'c', method: 'eth_chainId', params: [] })).result, '0x7a69', 'other calls are served')
})

t.test('a network with a ws node subscribes', async (t) => {
  const ws = await connectWs(`${tg.wsUrl('withws-1')}?apikey=${apiKey}`)
  t.teardown(() => ws.close())
  t.type((await ws.call(subscribe)).result, 'string')
})

t.test('the start warned of the network without a ws node, and only of it', async (t) => {
  const warned = lines.filter((l) => /eth_subscribe is refused/.test(l.msg))
  t.same(
    warned.map((l) => l.network),
    ['httponly-1'],
  )
  t.match(warned[0]?.msg, /networks\.httponly-1\.upstreams\[\]\.ws/)
})
