import t from 'tap'
import { startNats } from '../../harness/nats-server.js'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { within } from '../helpers/cli.js'
import { metricNow } from '../helpers/metrics.js'
import { JetStreamLog } from '../../src/events/jetstream-log.js'
import type { UsageRecorded } from '../../src/events/types.js'

// Killing and restarting nats-server while requests flow loses no usage event: the outbox keeps
// them while NATS is down, and msgID dedup makes re-sending harmless.
const nats = await startNats()
t.teardown(() => nats.stop())
const {
  tg,
  key: { apiKey, keyId },
  url,
} = await anvilGateway(t, { nats: nats.url, usageIntervalMs: 100 })

t.test('no usage event is lost while nats-server is killed and restarted', async (t) => {
  let served = 0
  const callSome = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) {
      const r = await rpc(url, { jsonrpc: '2.0', id: i, method: 'eth_blockNumber', params: [] }, { apiKey })
      t.equal(r.status, 200, 'calls are served while NATS is down too')
      served++
    }
  }

  await callSome(30)
  await nats.kill()
  await callSome(40)
  // The usage of those calls is flushed every 100 ms into the outbox, which cannot deliver it.
  const outboxPending = () => metricNow(tg.gateway.admin, 'tollgate_outbox_pending_events')
  const held = await within(5_000, async () => (await outboxPending()) > 0)
  t.ok(held !== undefined, `the outbox holds ${await outboxPending()} events while NATS is down`)
  await nats.restart()
  await callSome(30)
  await tg.stop() // flushes the meter, then the outbox into JetStream

  const log = await JetStreamLog.connect({ servers: nats.url, stream: tg.config.events.stream, subjectPrefix: 'tollgate', replicas: 1 })
  t.teardown(() => log.close())
  let total = 0
  const ids = new Set<string>()
  const counted = await within(10_000, async () => {
    total = 0
    ids.clear()
    for (let from = 1; ; ) {
      const batch = await log.read(from, 1000)
      if (batch.length === 0) break
      for (const s of batch) {
        if (s.event.type !== 'UsageRecorded' || s.event.keyId !== keyId) continue
        t.notOk(ids.has(s.event.id), 'no event stored twice')
        ids.add(s.event.id)
        total += (s.event as UsageRecorded).requests
      }
      from = batch[batch.length - 1].seq + 1
    }
    return total === served
  })
  t.equal(total, served, `usage events add up to the ${served} calls served`)
  t.ok(counted !== undefined)
})
