import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { connectWs } from '../helpers/ws-client.js'
import { regenerateKey } from '../../src/accounts/commands.js'
import { KeyCipher } from '../../src/keys/key-cipher.js'
import { loadPlanCatalog } from '../../src/plans/catalog.js'
import { systemClock } from '../../actors/runtime/clock.js'
import { openEventLog } from '../../src/events/open-log.js'
import type { NotificationsRecorded, UsageRecorded } from '../../src/events/types.js'

// WebSocket calls and notifications are metered like HTTP calls; a key regenerated while its
// connections are open closes them.
// Each subtest makes its own key.
const { tg } = await anvilGateway(t, { anvil: { blockTime: 1 }, usageIntervalMs: 200, plan: null })

t.test('a regenerated key closes its open connections with 1008', async (t) => {
  const { apiKey, accountId } = await tg.createKey('tier-3')
  const ws = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${apiKey}`)
  t.equal((await ws.call({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] })).result, '0x7a69')
  const g = tg.gateway
  await regenerateKey(
    {
      log: g.log,
      store: g.store,
      catalog: loadPlanCatalog('default'),
      cipher: KeyCipher.fromSecret(process.env.TOLLGATE_SECRET!),
      clock: systemClock,
      projector: g.projector,
    },
    { accountId },
  )
  const closed = await ws.closed
  t.equal(closed.code, 1008)
  t.match(closed.reason, /revoked or regenerated/)
})

t.test('calls and notifications are metered per key', async (t) => {
  const { apiKey, keyId } = await tg.createKey('tier-3')
  const ws = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${apiKey}`)
  const id = (await ws.call({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] })).result
  await ws.call([
    { jsonrpc: '2.0', id: 2, method: 'eth_chainId', params: [] },
    { jsonrpc: '2.0', id: 3, method: 'eth_blockNumber', params: [] },
  ])
  t.ok(await ws.nextNotification(id), 'a head')
  t.ok(await ws.nextNotification(id), 'another head')
  await ws.close()
  await tg.stop()
  const log = await openEventLog(tg.config.events, tg.config.dataDir)
  t.teardown(() => log.close())
  const events = (await log.read(1, 100_000)).map((s) => s.event)
  const usage = events.filter((e): e is UsageRecorded => e.type === 'UsageRecorded' && e.keyId === keyId)
  t.equal(
    usage.reduce((n, e) => n + e.requests, 0),
    3,
    'eth_subscribe and the two calls of the batch',
  )
  t.ok(usage.reduce((n, e) => n + e.bytesIn, 0) > 0)
  const notes = events.filter((e): e is NotificationsRecorded => e.type === 'NotificationsRecorded' && e.keyId === keyId)
  const count = notes.reduce((n, e) => n + e.notifications, 0)
  t.ok(count >= 2, `${count} notifications recorded`)
  t.ok(notes.every((e) => e.bytesOut > 0 && e.network === 'eth-1' && e.kind === 'full'))
})
