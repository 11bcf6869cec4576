import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startNats } from '../../harness/nats-server.js'
import { runCli } from '../helpers/cli.js'
import { until } from '../helpers/eventually.js'
import { rpc, TEST_SECRET } from '../helpers/gateway.js'
import { restartableConfig, startGatewayProcess } from '../helpers/gateway-process.js'
import { CallLoop } from '../helpers/call-loop.js'
import { eventsOf } from '../helpers/fleet.js'

// nats-server is SIGKILLed under load and restarted later on the same store; meanwhile the
// gateway itself is restarted. Every call is answered 200, and once NATS is back the usage
// events in the stream add up to the calls served, exactly.

const env = { TOLLGATE_SECRET: TEST_SECRET }
const anvil = await startAnvil()
t.teardown(() => anvil.stop())

/** Sum of UsageRecorded.requests per key id, read from the stream by the command line. */
async function usageByKey(configPath: string): Promise<Map<string, number>> {
  const sums = new Map<string, number>()
  const ids = new Set<string>()
  for (const e of await eventsOf(configPath)) {
    if (e.type !== 'UsageRecorded') continue
    if (ids.has(e.id)) throw new Error(`event ${e.id} stored twice`)
    ids.add(e.id)
    sums.set(e.keyId, (sums.get(e.keyId) ?? 0) + e.requests)
  }
  return sums
}

t.test('NATS killed under load, the gateway restarted during the outage: no call fails, no usage is lost', async (t) => {
  const nats = await startNats()
  t.teardown(() => nats.stop())
  const config = await restartableConfig(t, { natsUrl: nats.url, nodeUrl: anvil.url, usageIntervalMs: 200, extra: { shutdownMs: 5_000 } })
  const first = await startGatewayProcess(t, { config })
  const created = await runCli(['accounts', 'create', '--config', first.configPath, '--wallet', `0x${'4'.repeat(40)}`, '--plan', 'tier-3'], env)
  t.equal(created.code, 0, created.stderr)
  const apiKey: string = created.last.apiKey
  const url = `${first.url('eth-1')}?apikey=${apiKey}`
  // The gateway learns of the new key through its event log: wait for it (10 s, an outer bound).
  t.ok(await until(async () => (await rpc(url, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] })).status === 200), 'the key works')
  // The command prints the key's id (its KeyIssued event's).
  const keyId: string = created.last.keyId
  const before = (await usageByKey(first.configPath)).get(keyId) ?? 0

  const clients = new CallLoop(() => url, 2)
  t.teardown(() => clients.stop())
  await clients.more(100)
  await nats.kill()
  await clients.more(100)

  // A deploy during the outage: the first instance drains (its outbox cannot reach NATS and keeps
  // the events on disk), the second starts with NATS still down.
  first.signal('SIGTERM')
  t.same(await first.exited, { code: 0, signal: null }, 'the first instance stops cleanly with NATS down')
  t.ok(
    first.logs.some((l) => l.msg === 'events left in the outbox; the next start sends them'),
    'and says the outbox keeps its events',
  )
  const second = await startGatewayProcess(t, { config })
  t.ok(
    second.logs.some((l) => /NATS is unreachable/.test(l.msg)),
    'the second instance starts with NATS down and says so',
  )
  await clients.more(100)

  await nats.restart()
  await clients.more(100)
  const counts = await clients.stop()
  second.signal('SIGTERM')
  t.same(await second.exited, { code: 0, signal: null })

  t.equal(counts.failed, 0, `no call failed: ${counts.failures.join(' | ')}`)
  const after = (await usageByKey(second.configPath)).get(keyId) ?? 0
  t.equal(after - before, counts.served, `the usage events add up to the ${counts.served} calls served, exactly`)
})
