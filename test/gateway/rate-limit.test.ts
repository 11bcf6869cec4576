import t from 'tap'
import { FakeClock } from '../helpers/fake-clock.js'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { openEventLog } from '../../src/events/open-log.js'
import type { RateLimited } from '../../src/events/types.js'

// A real burst past a key's HTTP limit: 429 with Retry-After, RateLimit-* headers and -32005,
// counted into RateLimited decision events. The gateway runs on a fake clock that only the test
// moves: a burst arrives at one instant however slow the machine, so the counts are exact (on the
// real clock a token could come back during the burst). Refill over time is pinned further in
// test/actors/key-admission.test.ts.
const clock = new FakeClock(Date.now())
const {
  tg,
  key: { apiKey, keyId },
  url,
} = await anvilGateway(t, {
  catalog: 'set-b',
  usageIntervalMs: 200,
  clock,
  plan: 'free', // set B Free: 2 requests per second
  keyNodes: [{ network: 'eth-1', kind: 'full' }],
})
const call = { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }
/** 429s given to `keyId`, to compare with what the RateLimited events count. */
let refused = 0

t.test('a burst past the limit gets 429 with the headers clients need', async (t) => {
  const answers = await Promise.all(Array.from({ length: 8 }, () => rpc(url, call, { apiKey })))
  const statuses = answers.map((a) => a.status)
  t.same(statuses.filter((s) => s === 200).length, 2, 'the burst of 2 is served')
  t.same(statuses.filter((s) => s === 429).length, 6, 'the other 6 are limited (a token is 500 ms away: past the 250 ms queue)')
  refused += 6
  const r = answers.find((a) => a.status === 429)!
  t.equal(r.json.error.code, -32005)
  t.match(r.json.error.message, /2 full-node calls per second/)
  t.equal(r.headers.get('retry-after'), '1', 'Retry-After in whole seconds: 500 ms rounded up')
  t.equal(r.headers.get('ratelimit-limit'), '2')
  t.equal(r.headers.get('ratelimit-remaining'), '0')
  t.equal(r.headers.get('ratelimit-reset'), '1', 'full again in a second')
})

t.test('a token comes back after 500 ms, and only one', async (t) => {
  clock.advance(500)
  const answers = await Promise.all(Array.from({ length: 3 }, () => rpc(url, call, { apiKey })))
  t.same(answers.map((a) => a.status).sort(), [200, 429, 429])
  refused += 2
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
  t.equal(
    events.reduce((n, e) => n + e.count, 0),
    refused,
    'every 429 is counted, once',
  )
  t.same([...new Set(events.map((e) => e.reason))], ['http-rps'])
  t.same(
    events.map((e) => e.intervalStart),
    [clock.now() - 500, clock.now()].map((at) => at - (at % 200)),
    'one event per interval of the fake clock',
  )
})
