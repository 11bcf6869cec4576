import t from 'tap'
import { deployLogEmitter, emitLogs } from '../../harness/log-emitter.js'
import { notificationUnits } from '../../src/ws/notification-budget.js'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { waitFor } from '../helpers/eventually.js'
import { metric } from '../helpers/metrics.js'
import { notificationEventsOf } from '../helpers/usage-events.js'
import { connectWs, type WsClient } from '../helpers/ws-client.js'

// What docs/costs.md's notification table says, against a real anvil: each kind served
// (newHeads, logs: one log a notification, newPendingTransactions) is charged 1 unit per 25 bytes
// of each copy delivered, rounded up, in the usage events; one key's duplicate subscriptions of one
// filter share one upstream subscription and are charged each copy they deliver.

const { tg, anvil } = await anvilGateway(t, { usageIntervalMs: 200, plan: null })
const emitter = await deployLogEmitter(anvil)
const heads = await tg.createKey('tier-3')
const logs = await tg.createKey('tier-3')
const pending = await tg.createKey('tier-3')
const url = (apiKey: string) => `${tg.wsUrl('eth-1')}?apikey=${apiKey}`

async function subscribe(ws: WsClient, params: unknown[], n = 1): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < n; i++) ids.push((await ws.call({ jsonrpc: '2.0', id: i, method: 'eth_subscribe', params })).result)
  return ids
}

/** The texts delivered to `ids` on `ws`. */
const textsOf = (ws: WsClient, ids: string[]) => ids.flatMap((id) => ws.notificationTexts(id))

const h = await connectWs(url(heads.apiKey))
const headIds = await subscribe(h, ['newHeads'])
// One key's five identical logs subscriptions over two connections.
const filter = ['logs', { address: emitter.address }]
const subscribeCallsBefore = (await metric(tg.gateway.admin, 'tollgate_ws_upstream_subscribe_calls_total', { network: 'eth-1', kind: 'logs' })) ?? 0
const l1 = await connectWs(url(logs.apiKey))
const l2 = await connectWs(url(logs.apiKey))
const logIds1 = await subscribe(l1, filter, 3)
const logIds2 = await subscribe(l2, filter, 2)
const p = await connectWs(url(pending.apiKey))
const pendingIds = await subscribe(p, ['newPendingTransactions'])

// Two blocks of three logs: six pending transactions, two heads (at least), six logs.
await emitLogs(anvil, emitter, { blocks: 2, perBlock: 3, gap: 0 })
await waitFor(
  () => [...logIds1, ...logIds2].every((id) => l1.notifications(id).length + l2.notifications(id).length === 6),
  'six logs to each of the five subscriptions',
)
await waitFor(() => p.notifications(pendingIds[0]).length >= 6, 'the six pending transactions')
await waitFor(() => h.notifications(headIds[0]).length >= 2, 'the two heads')

t.test('duplicate subscriptions of one key share one upstream subscription', async (t) => {
  const after = await metric(tg.gateway.admin, 'tollgate_ws_upstream_subscribe_calls_total', { network: 'eth-1', kind: 'logs' })
  t.equal(after, subscribeCallsBefore + 1, 'one eth_subscribe sent to the node for five client subscriptions')
})

t.test('each kind is charged 1 unit per 25 bytes of each copy delivered, duplicates each', async (t) => {
  for (const ws of [h, l1, l2, p]) await ws.close()
  await tg.stop() // flushes the meter and the outbox
  const events = await notificationEventsOf(tg.config)
  const cases = [
    { kind: 'newHeads', key: heads, texts: textsOf(h, headIds) },
    { kind: 'logs', key: logs, texts: [...textsOf(l1, logIds1), ...textsOf(l2, logIds2)] },
    { kind: 'newPendingTransactions', key: pending, texts: textsOf(p, pendingIds) },
  ]
  for (const { kind, key, texts } of cases) {
    const mine = events.filter((e) => e.keyId === key.keyId)
    const recorded = mine.reduce((s, e) => s + e.notifications, 0)
    const units = mine.reduce((s, e) => s + (e.units ?? 0), 0)
    const bytes = mine.reduce((s, e) => s + e.bytesOut, 0)
    const expected = texts.reduce((s, text) => s + Math.ceil(Buffer.byteLength(text) / 25), 0)
    t.equal(recorded, texts.length, `${kind}: every copy delivered recorded (${texts.length})`)
    t.equal(
      bytes,
      texts.reduce((s, text) => s + Buffer.byteLength(text), 0),
      `${kind}: their bytes`,
    )
    t.equal(units, expected, `${kind}: ${units} units, 1 per 25 bytes of each copy`)
    t.equal(notificationUnits(texts[0].length), Math.ceil(texts[0].length / 25), `${kind}: the rule the gateway applies is the documented one`)
    t.comment(`${kind}: ${texts.length} copies, ${bytes} bytes, ${units} units (${Math.round(bytes / texts.length)} bytes a copy)`)
  }
  const logCopies = cases[1].texts.length
  t.equal(logCopies, 30, 'six logs to five subscriptions: thirty copies, each charged')
})
