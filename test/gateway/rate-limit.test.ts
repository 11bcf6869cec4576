import t from 'tap'
import { startAnvil } from '../helpers/anvil.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { openEventLog } from '../../src/events/open-log.js'
import type { RateLimited } from '../../src/events/types.js'

// A real burst past a key's HTTP limit: 429 with Retry-After, RateLimit-* headers and -32005,
// counted into RateLimited decision events. (Refill over time is pinned with a fake clock in
// test/actors/key-admission.test.ts.)
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const tg = await startTestGateway(t, {
  networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, ws: anvil.wsUrl, kind: 'full' }] } },
  catalog: 'set-b',
  usageIntervalMs: 200,
})
const { apiKey, keyId } = await tg.createKey('free', [{ network: 'eth-1', kind: 'full' }]) // set B Free: 2 requests per second
const url = tg.url('eth-1')
const call = { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }

t.test('a burst past the limit gets 429 with the headers clients need', async (t) => {
  const answers = await Promise.all(Array.from({ length: 8 }, () => rpc(url, call, { apiKey })))
  const ok = answers.filter((a) => a.status === 200)
  const limited = answers.filter((a) => a.status === 429)
  t.equal(ok.length + limited.length, 8, 'every call is either served or limited')
  t.ok(ok.length >= 2 && ok.length <= 3, `the first ${ok.length} calls of the second are served`)
  t.ok(limited.length >= 5)
  const r = limited[0]
  t.equal(r.json.error.code, -32005)
  t.match(r.json.error.message, /2 full-node calls per second/)
  t.ok(Number(r.headers.get('retry-after')) >= 1, 'Retry-After in seconds')
  t.equal(r.headers.get('ratelimit-limit'), '2')
  t.equal(r.headers.get('ratelimit-remaining'), '0')
  t.ok(Number(r.headers.get('ratelimit-reset')) >= 1)
})

t.test('a batch counts each of its calls', async (t) => {
  const other = await tg.createKey('free', [{ network: 'eth-1', kind: 'full' }])
  const batch = Array.from({ length: 2 }, (_, i) => ({ ...call, id: i }))
  t.equal((await rpc(url, batch, { apiKey: other.apiKey })).status, 200, 'two calls fill the bucket')
  const next = await rpc(url, call, { apiKey: other.apiKey })
  t.equal(next.status, 429, 'the next call is over the limit')
})

t.test('rejections become RateLimited decision events', async (t) => {
  await tg.stop()
  const log = await openEventLog(tg.config.events, tg.config.dataDir)
  t.teardown(() => log.close())
  const events = (await log.read(1, 10_000)).map((s) => s.event).filter((e): e is RateLimited => e.type === 'RateLimited' && e.keyId === keyId)
  const count = events.reduce((n, e) => n + e.count, 0)
  t.ok(count >= 5, `${count} rejected calls recorded`)
  t.equal(events[0].reason, 'http-rps')
})
