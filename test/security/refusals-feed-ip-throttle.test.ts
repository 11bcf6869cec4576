import t, { type Test } from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { RawConnection } from '../helpers/raw-http.js'
import { tryUpgrade } from '../helpers/ws-client.js'
import WebSocket from 'ws'

// Calls refused before they reach a node feed the per-IP throttle, on a real gateway and anvil:
// an address spraying junk keys, random networks, bad JSON or oversized requests is throttled for
// every key after limits.ipThrottle.rejections of them. Before, only rate-limit rejections counted:
// 20 junk keys in a row were 20 401s, and so were 20,000.

const REJECTIONS = 20
const {
  tg,
  key: { apiKey },
} = await anvilGateway(t, {
  anvil: { chainId: 1 },
  nodeWs: false,
  // A window and a throttle longer than any run of this file: the count cannot age out meanwhile.
  limits: { ipThrottle: { rejections: REJECTIONS, windowMs: 3_600_000, durationMs: 3_600_000 } },
  // Each subtest is its own client address (the last X-Forwarded-For entry, as behind nginx).
  config: { trustProxy: true },
  // The frame subtests open 20 connections of one key at once: not what the new-connection rate is about.
  ws: { newConnectionsPerSecond: 1000 },
})
const port = Number(new URL(tg.gateway.http).port)
const call = { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }

/** `REJECTIONS` refusals from `ip` each answered as themselves, then a valid call from it is 429 IP_THROTTLED; another address is still served. */
async function throttledAfter(t: Test, ip: string, refuse: (headers: Record<string, string>) => Promise<number>, expected: number): Promise<void> {
  const headers = { 'X-Forwarded-For': ip }
  const statuses: number[] = []
  for (let i = 0; i < REJECTIONS; i++) statuses.push(await refuse(headers))
  t.same([...new Set(statuses)], [expected], `the first ${REJECTIONS} are answered as what they are`)
  const next = await rpc(tg.url('eth-1'), call, { apiKey, headers })
  t.equal(next.status, 429, 'then a valid call from the same address is refused')
  t.equal(next.json?.error?.code, -32005)
  t.match(next.json?.error?.message, /^Too many requests from this IP address/)
  t.match(next.headers.get('retry-after'), /^\d+$/)
  const other = await rpc(tg.url('eth-1'), call, { apiKey, headers: { 'X-Forwarded-For': `${ip}1` } })
  t.same([other.status, other.json], [200, { jsonrpc: '2.0', id: 1, result: '0x1' }], 'another address is served')
}

t.test('junk keys over HTTP', (t) =>
  throttledAfter(t, '203.0.113.10', async (headers) => (await rpc(tg.url('eth-1'), call, { apiKey: `tg_junk${Math.random()}`, headers })).status, 401),
)

t.test('a request naming two keys', (t) =>
  throttledAfter(t, '203.0.113.11', async (headers) => (await rpc(tg.url('eth-1'), call, { apiKey, bearer: 'tg_other', headers })).status, 401),
)

t.test('random network slugs', (t) =>
  throttledAfter(t, '203.0.113.12', async (headers) => (await rpc(tg.url(`nope-${Math.random()}`), call, { apiKey, headers })).status, 404),
)

t.test('bad JSON with a valid key', (t) =>
  throttledAfter(
    t,
    '203.0.113.13',
    async (headers) => {
      const r = await rpc(tg.url('eth-1'), '{"jsonrpc":', { apiKey, headers })
      return r.json.error.code
    },
    -32700,
  ),
)

t.test('batches over limits.maxBatch', (t) =>
  throttledAfter(
    t,
    '203.0.113.14',
    async (headers) =>
      (
        await rpc(
          tg.url('eth-1'),
          Array.from({ length: 101 }, (_, id) => ({ ...call, id })),
          { apiKey, headers },
        )
      ).status,
    413,
  ),
)

t.test('bodies announced over limits.maxBodyBytes', (t) =>
  throttledAfter(
    t,
    '203.0.113.15',
    async (headers) => {
      const conn = await RawConnection.open(port)
      try {
        conn.send('POST', `/http/eth-1?apikey=${apiKey}`, { ...headers, 'Content-Length': String(2 * 1024 * 1024) })
        return (await conn.read()).status
      } finally {
        conn.destroy()
      }
    },
    413,
  ),
)

t.test('junk keys on the WebSocket upgrade', (t) =>
  throttledAfter(t, '203.0.113.16', async (headers) => (await tryUpgrade(`${tg.wsUrl('eth-1')}?apikey=tg_junk${Math.random()}`, headers)).status, 401),
)

/** Open a WebSocket from `headers`' address, send `frame` as it is, and wait for the gateway to close it. */
function sendAndClosed(headers: Record<string, string>, frame: Buffer, binary: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${tg.wsUrl('eth-1')}?apikey=${apiKey}`, { headers })
    ws.on('error', () => {})
    ws.once('unexpected-response', () => reject(new Error('upgrade refused')))
    ws.once('open', () => ws.send(frame, { binary }))
    ws.once('close', (code) => resolve(code))
  })
}

t.test('WebSocket text frames that are not UTF-8 (uWS closes the connection: 1006)', (t) =>
  throttledAfter(t, '203.0.113.17', (headers) => sendAndClosed(headers, Buffer.from('{"id":"\xff"}', 'latin1'), false), 1006),
)

t.test('WebSocket frames over ws.maxMessageBytes (uWS closes the connection: 1006)', (t) =>
  throttledAfter(t, '203.0.113.18', (headers) => sendAndClosed(headers, Buffer.alloc(1024 * 1024 + 1, 0x20), true), 1006),
)
