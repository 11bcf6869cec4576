import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import type { UsageRecorded } from '../../src/events/types.js'
import { openEventLog } from '../../src/events/open-log.js'
import { METHODS } from '../../src/rpc/method-table.js'
import { metric } from '../helpers/metrics.js'

// Usage events add up exactly to the calls served, each call of a batch counted.
const { tg, key: a, url } = await anvilGateway(t, { archive: true, usageIntervalMs: 200 })
const b = await tg.createKey('tier-1', [{ network: 'eth-1', kind: 'full' }])
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

  const unitsServed = await metric(tg.gateway.admin, 'tollgate_units_served_total')
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
  const units = (keyId: string, kind: string) => events.filter((e) => e.keyId === keyId && e.kind === kind).reduce((n, e) => n + (e.units ?? -1), 0)
  const cost = (method: string) => METHODS[method]!.cost
  t.equal(units(a.keyId, 'full'), 15 * cost('eth_blockNumber') + cost('eth_chainId'), "key a: each full-node call its method's units")
  t.equal(units(a.keyId, 'archive'), 2 * cost('trace_block'), 'key a: the traces, at their units')
  t.equal(units(b.keyId, 'full'), 7 * cost('eth_chainId'), 'key b')
  for (const e of events) t.equal(e.version, 2, 'events of the current version, with units')
  t.equal(
    unitsServed,
    events.reduce((n, e) => n + (e.units ?? 0), 0),
    'tollgate_units_served_total: the units of the events',
  )
  for (const e of events) {
    t.equal(e.network, 'eth-1')
    t.ok(e.accountId === a.accountId || e.accountId === b.accountId)
    t.notMatch(JSON.stringify(e), new RegExp(a.apiKey), 'no event carries the key')
  }
  t.equal(new Set(events.map((e) => e.id)).size, events.length, 'event ids are unique')
})
