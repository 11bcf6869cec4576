import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startAnvil } from '../../harness/anvil.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { FakeClock } from '../helpers/fake-clock.js'
import { openEventLog } from '../../src/events/open-log.js'

// Limits over time, with a fake clock in the gateway: the trial period, the archive limit apart
// from the full one, and IP throttling that holds across a restart.
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const dir = await mkdtemp(join(tmpdir(), 'tollgate-limits-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))
const catalogPath = join(dir, 'catalog.json')
await writeFile(
  catalogPath,
  JSON.stringify({
    name: 'test',
    description: 'Small limits for tests.',
    plans: [
      {
        id: 'trial',
        name: 'Free Trial',
        description: 'a day',
        priceUsdPerMonth: null,
        periodMs: 86_400_000,
        limits: { fullRps: 100, archiveRps: 0 },
        nodes: { rule: 'all-full' },
      },
      {
        id: 'small',
        name: 'Small',
        description: 'tiny limits',
        priceUsdPerMonth: 1,
        periodMs: 2_592_000_000,
        limits: { fullRps: 100, archiveRps: 2 },
        nodes: { rule: 'all' },
      },
      {
        id: 'slow',
        name: 'Slow',
        description: '2 rps',
        priceUsdPerMonth: 1,
        periodMs: 2_592_000_000,
        limits: { fullRps: 2, archiveRps: 2 },
        nodes: { rule: 'all' },
      },
    ],
  }),
)
const networks = {
  'eth-1': {
    chainId: 31337,
    upstreams: [
      { url: anvil.url, kind: 'full' as const },
      { url: anvil.url, kind: 'archive' as const },
    ],
  },
}
const call = (method: string, params: unknown[] = []) => ({ jsonrpc: '2.0', id: 1, method, params })

t.test('the Free Trial ends after 24 hours with a 403 that says so, and a PlanEnded event', async (t) => {
  const clock = new FakeClock(Date.now())
  const tg = await startTestGateway(t, { networks, catalog: catalogPath, clock })
  const { apiKey, accountId } = await tg.createKey('trial')
  t.equal((await rpc(tg.url('eth-1'), call('eth_blockNumber'), { apiKey })).status, 200)
  clock.advance(86_400_000 - 1)
  t.equal((await rpc(tg.url('eth-1'), call('eth_blockNumber'), { apiKey })).status, 200, 'a millisecond before the end')
  clock.advance(1)
  const ended = await rpc(tg.url('eth-1'), call('eth_blockNumber'), { apiKey })
  t.equal(ended.status, 403)
  t.match(ended.json.error.message, /Free Trial of this account ended at .*choose a plan/)
  await tg.stop()
  const log = await openEventLog(tg.config.events, tg.dataDir)
  t.teardown(() => log.close())
  const events = (await log.read(1, 1000)).map((s) => s.event)
  t.ok(
    events.some((e) => e.type === 'PlanEnded' && e.accountId === accountId && e.reason === 'expired'),
    'PlanEnded in the log',
  )
})

t.test('archive calls count against the archive limit, full calls against the full one', async (t) => {
  const clock = new FakeClock(Date.now())
  const tg = await startTestGateway(t, { networks, catalog: catalogPath, clock, limits: { queueMs: 0 } })
  const { apiKey } = await tg.createKey('small')
  const url = tg.url('eth-1')
  t.equal((await rpc(url, call('trace_block', ['0x0']), { apiKey })).status, 200)
  t.equal((await rpc(url, call('trace_block', ['0x0']), { apiKey })).status, 200)
  const third = await rpc(url, call('trace_block', ['0x0']), { apiKey })
  t.equal(third.status, 429)
  t.match(third.json.error.message, /2 archive-node calls per second/)
  t.equal((await rpc(url, call('eth_blockNumber'), { apiKey })).status, 200, 'the full-node limit is apart')
  clock.advance(500)
  t.equal((await rpc(url, call('trace_block', ['0x0']), { apiKey })).status, 200, 'a token is back after 500 ms')
})

t.test('calls over the limit wait in the queue before they are rejected', async (t) => {
  // A still fake clock: the 4 calls arrive at the same instant, however slow the machine.
  const tg = await startTestGateway(t, { networks, catalog: catalogPath, limits: { queueMs: 600 }, clock: new FakeClock(Date.now()) })
  const { apiKey } = await tg.createKey('slow')
  const url = tg.url('eth-1')
  // 2 rps, burst 2: the 3rd call waits 500 ms in the queue, the 4th would wait 1000 ms: rejected.
  const answers = await Promise.all([1, 2, 3, 4].map(() => rpc(url, call('eth_blockNumber'), { apiKey })))
  t.same(answers.map((a) => a.status).sort(), [200, 200, 200, 429])
})

t.test('an IP that keeps exceeding is throttled for every key, and stays throttled after a restart', async (t) => {
  const clock = new FakeClock(Date.now())
  const opts = { networks, catalog: catalogPath, clock, limits: { queueMs: 0, ipThrottle: { rejections: 10, windowMs: 10_000, durationMs: 60_000 } } }
  const tg = await startTestGateway(t, opts)
  const slow = await tg.createKey('slow')
  const other = await tg.createKey('small')
  const url = tg.url('eth-1')
  const statuses: number[] = []
  for (let i = 0; i < 12; i++) statuses.push((await rpc(url, call('eth_blockNumber'), { apiKey: slow.apiKey })).status)
  t.same(statuses.slice(0, 2), [200, 200])
  t.ok(
    statuses.slice(2).every((s) => s === 429),
    'the rest over the key limit',
  )
  const blocked = await rpc(url, call('eth_blockNumber'), { apiKey: other.apiKey })
  t.equal(blocked.status, 429, 'another key from the same IP is throttled too')
  t.equal(blocked.json.error.code, -32005)
  t.match(blocked.json.error.message, /this IP address.*throttled for every key until/)
  t.equal(blocked.headers.get('retry-after'), '60')

  await tg.stop()
  const restarted = await startTestGateway(t, { ...opts, dataDir: tg.dataDir })
  const still = await rpc(restarted.url('eth-1'), call('eth_blockNumber'), { apiKey: other.apiKey })
  t.equal(still.status, 429, 'the throttle came back from the event log')
  clock.advance(60_000)
  t.equal((await rpc(restarted.url('eth-1'), call('eth_blockNumber'), { apiKey: other.apiKey })).status, 200, 'lifted by itself')
})
