import t from 'tap'
import { deployLogEmitter, emitLogs } from '../../harness/log-emitter.js'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { waitFor } from '../helpers/eventually.js'
import { metric } from '../helpers/metrics.js'
import { notificationEventsOf } from '../helpers/usage-events.js'
import { connectWs } from '../helpers/ws-client.js'

// Notifications cost units (1 per 25 bytes delivered, each copy) and pass a budget per account:
// one key's 20 identical `logs` subscriptions used to turn each log into 20 notifications at no
// cost and without limit. Here the budget is 400 units/s (800 at once): one block of 5 logs is
// about 100 copies (~2,200 units) for the duplicating key, whose connection is closed, and 5
// (~110 units) for another account's key, which receives them all.

const { tg, anvil } = await anvilGateway(t, { usageIntervalMs: 200, plan: null, config: { ws: { notificationUnitsPerSecond: 400 } } })
const emitter = await deployLogEmitter(anvil)
const greedy = await tg.createKey('tier-3')
const modest = await tg.createKey('tier-3')
const filter = ['logs', { address: emitter.address }]

const a = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${greedy.apiKey}`)
const b = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${modest.apiKey}`)
const copies: string[] = []
for (let i = 0; i < 20; i++) copies.push((await a.call({ jsonrpc: '2.0', id: i, method: 'eth_subscribe', params: filter })).result)
const one: string = (await b.call({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: filter })).result
t.equal(new Set(copies).size, 20, 'twenty subscriptions, one filter')

t.test('past its budget the duplicating key is cut off; another account receives every notification', async (t) => {
  await emitLogs(anvil, emitter, { blocks: 1, perBlock: 5, gap: 0 })
  const closed = await a.closed
  t.equal(closed.code, 1008)
  t.match(closed.reason, /^Notification budget: over 400 units\/s \(1 per 25 bytes\); subscribe once per filter/)
  const delivered = copies.reduce((n, id) => n + a.notifications(id).length, 0)
  t.ok(delivered > 0 && delivered < 100, `${delivered} of 100 copies delivered before the budget was spent`)
  await waitFor(() => b.notifications(one).length === 5, 'the other key’s five logs')
  t.equal(await metric(tg.gateway.admin, 'tollgate_ws_closed_total', { cause: 'notification-budget' }), 1, 'counted by cause')
})

t.test('each notification delivered is charged its units, counted in the usage events', async (t) => {
  await b.close()
  await tg.stop() // flushes the meter and the outbox
  const events = await notificationEventsOf(tg.config)
  for (const key of [greedy, modest]) {
    const mine = events.filter((e) => e.keyId === key.keyId)
    const n = mine.reduce((s, e) => s + e.notifications, 0)
    const bytes = mine.reduce((s, e) => s + e.bytesOut, 0)
    const units = mine.reduce((s, e) => s + (e.units ?? -1_000_000), 0)
    t.ok(n > 0, `${n} notifications recorded`)
    for (const e of mine) t.equal(e.version, 2, 'events of the version with units')
    // Each notification ceil(bytes / 25): at least the bytes over 25, at most one more per notification.
    t.ok(units >= Math.ceil(bytes / 25) && units <= bytes / 25 + n, `${units} units for ${n} notifications of ${bytes} bytes`)
  }
  const modestN = events.filter((e) => e.keyId === modest.keyId).reduce((s, e) => s + e.notifications, 0)
  t.equal(modestN, 5, 'the other key: its five')
})
