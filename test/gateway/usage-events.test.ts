import t from 'tap'
import { startAnvil } from '../helpers/anvil.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import type { UsageRecorded } from '../../src/events/types.js'
import { openEventLog } from '../../src/events/open-log.js'

// Usage events add up exactly to the calls served, each call of a batch counted.
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: 31337,
      upstreams: [
        { url: anvil.url, ws: anvil.wsUrl, kind: 'full' },
        { url: anvil.url, kind: 'archive' },
      ],
    },
  },
  usageIntervalMs: 200,
})
const a = await tg.createKey('tier-3')
const b = await tg.createKey('tier-1', [{ network: 'eth-1', kind: 'full' }])
const url = tg.url('eth-1')
const call = (id: number, method = 'eth_blockNumber') => ({ jsonrpc: '2.0', id, method, params: [] })

t.test('usage events add up exactly to the calls served', async (t) => {
  // Key a: 5 singles, a batch of 10 full calls, a batch with 2 trace calls (archive) + 1 invalid
  // (not served) + 1 refused method (not served) + 1 notification (served, not answered).
  for (let i = 0; i < 5; i++) t.equal((await rpc(url, call(i), { apiKey: a.apiKey })).status, 200)
  t.equal(
    (
      await rpc(
        url,
        Array.from({ length: 10 }, (_, i) => call(i)),
        { apiKey: a.apiKey },
      )
    ).json.length,
    10,
  )
  const mixed = await rpc(
    url,
    [
      { jsonrpc: '2.0', id: 1, method: 'trace_block', params: ['0x0'] },
      { jsonrpc: '2.0', id: 2, method: 'trace_block', params: ['0x0'] },
      { jsonrpc: '1.0', id: 3, method: 'eth_chainId' },
      { jsonrpc: '2.0', id: 4, method: 'admin_peers', params: [] },
      { jsonrpc: '2.0', method: 'eth_chainId', params: [] },
    ],
    { apiKey: a.apiKey },
  )
  t.equal(mixed.json.length, 4)
  // Key b: 7 singles.
  for (let i = 0; i < 7; i++) await rpc(url, call(i, 'eth_chainId'), { apiKey: b.apiKey })

  await tg.stop() // flushes the meter and the outbox

  const log = await openEventLog(tg.config.events, tg.config.dataDir)
  t.teardown(() => log.close())
  const events: UsageRecorded[] = []
  for (let from = 1; ; ) {
    const batch = await log.read(from, 500)
    if (batch.length === 0) break
    for (const s of batch) if (s.event.type === 'UsageRecorded') events.push(s.event)
    from = batch[batch.length - 1].seq + 1
  }
  const sum = (keyId: string, kind?: string) => events.filter((e) => e.keyId === keyId && (!kind || e.kind === kind)).reduce((n, e) => n + e.requests, 0)

  t.equal(sum(a.keyId, 'full'), 5 + 10 + 1, 'key a: full-node calls served')
  t.equal(sum(a.keyId, 'archive'), 2, 'key a: archive-node calls served')
  t.equal(sum(b.keyId), 7, 'key b: calls served')
  for (const e of events) {
    t.equal(e.network, 'eth-1')
    t.ok(e.accountId === a.accountId || e.accountId === b.accountId)
    t.notMatch(JSON.stringify(e), new RegExp(a.apiKey), 'no event carries the key')
  }
  t.equal(new Set(events.map((e) => e.id)).size, events.length, 'event ids are unique')
})
