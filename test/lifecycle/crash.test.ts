import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startNats } from '../../harness/nats-server.js'
import { runCli } from '../helpers/cli.js'
import { until } from '../helpers/eventually.js'
import { rpc, TEST_SECRET } from '../helpers/gateway.js'
import { restartableConfig, startGatewayProcess } from '../helpers/gateway-process.js'
import { CallLoop } from '../helpers/call-loop.js'
import { eventsOf } from '../helpers/fleet.js'

// SIGKILL under load, while NATS is down so that the outbox holds events: after a restart the
// outbox resends what it held, usage counted is never more than what was served, and what is
// lost is at most the usage interval in progress at the kill.

const env = { TOLLGATE_SECRET: TEST_SECRET }
const INTERVAL_MS = 500
/** lmdb-js commits the outbox's writes a few ms after publish(): a kill in that gap loses them too. */
const COMMIT_SLACK_MS = 50

t.test('a gateway SIGKILLed under load loses at most the usage interval in progress', async (t) => {
  const anvil = await startAnvil()
  t.teardown(() => anvil.stop())
  const nats = await startNats()
  t.teardown(() => nats.stop())
  const config = await restartableConfig(t, { natsUrl: nats.url, nodeUrl: anvil.url, usageIntervalMs: INTERVAL_MS })
  const first = await startGatewayProcess(t, { config })
  const created = await runCli(['accounts', 'create', '--config', first.configPath, '--wallet', `0x${'5'.repeat(40)}`, '--plan', 'tier-3'], env)
  t.equal(created.code, 0, created.stderr)
  const url = `${first.url('eth-1')}?apikey=${created.last.apiKey}`
  // The gateway learns of the new key through its event log: wait for it (10 s, an outer bound).
  t.ok(await until(async () => (await rpc(url, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] })).status === 200), 'the key works')

  const clients = new CallLoop(() => url, 2)
  t.teardown(() => clients.stop())
  await clients.more(200)
  await nats.kill()
  await clients.more(2_000)
  const killedAt = Date.now()
  await first.kill()
  const counts = await clients.stop()
  // Calls in flight at the kill, and any the clients sent before they saw it, fail; none before.
  t.same(
    counts.failedAt.filter((at) => at < killedAt),
    [],
    `no call failed before the kill (${counts.failed} after it: ${counts.failures.join(' | ')})`,
  )
  const inLastInterval = counts.servedAt.filter((at) => at >= killedAt - INTERVAL_MS - COMMIT_SLACK_MS).length

  await nats.restart()
  const second = await startGatewayProcess(t, { config })
  second.signal('SIGTERM')
  t.same(await second.exited, { code: 0, signal: null }, 'the restarted gateway sent its outbox and stopped')

  const ids = new Set<string>()
  let counted = 0
  let twice = 0
  for (const e of await eventsOf(second.configPath)) {
    if (e.type !== 'UsageRecorded') continue
    if (ids.has(e.id)) twice++
    ids.add(e.id)
    counted += e.requests
  }
  t.equal(twice, 0, 'no usage event stored twice')
  const lost = counts.served + 1 - counted
  t.ok(counted <= counts.served + 1, `usage counted (${counted}) is never more than the calls served (${counts.served + 1})`)
  t.ok(
    lost <= inLastInterval,
    `lost ${lost} calls' usage; at most the ${inLastInterval} served in the last ${INTERVAL_MS} ms (+${COMMIT_SLACK_MS} ms) before the kill`,
  )
})
