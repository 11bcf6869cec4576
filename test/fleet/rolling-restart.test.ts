import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startNats } from '../../harness/nats-server.js'
import { runCli, within } from '../helpers/cli.js'
import { rpc, TEST_SECRET } from '../helpers/gateway.js'
import { restartableConfig, startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.js'
import { CallLoop } from '../helpers/call-loop.js'
import { startNginx } from '../helpers/nginx.js'
import { eventsOf } from '../helpers/fleet.js'

// Two instances behind nginx (the load balancer config of docs/fleet.md), clients calling through it
// without pause: each instance is restarted in turn (SIGTERM, wait for its exit, start again on
// the same port). No call fails, and the usage events add up to the calls served, exactly.

// Gateway processes started, restarted and killed: minutes on a loaded machine (tap's 120 s was hit
// at a load average of 15-19); each wait inside still ends a test that never gets there.
t.setTimeout(600_000)
const env = { TOLLGATE_SECRET: TEST_SECRET }
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const nats = await startNats()
t.teardown(() => nats.stop())
const first = await restartableConfig(t, { natsUrl: nats.url, nodeUrl: anvil.url, usageIntervalMs: 200, extra: { shutdownMs: 5_000, trustProxy: true } })
const second = {
  ...(await restartableConfig(t, { natsUrl: nats.url, nodeUrl: anvil.url, usageIntervalMs: 200, extra: { shutdownMs: 5_000, trustProxy: true } })),
  events: first.events,
}
const configs = [first, second]
const instances: GatewayProcess[] = await Promise.all(configs.map((config) => startGatewayProcess(t, { config })))
const nginx = await startNginx(instances.map((gw) => gw.http.replace('http://', '')))
t.teardown(() => nginx.stop())

t.test('a rolling restart behind nginx fails no call and loses no usage', async (t) => {
  const created = await runCli(['accounts', 'create', '--config', instances[0]!.configPath, '--wallet', `0x${'7'.repeat(40)}`, '--plan', 'tier-3'], env)
  t.equal(created.code, 0, created.stderr)
  const url = `${nginx.url}/http/eth-1?apikey=${created.last.apiKey}`
  // One call served by each instance directly (before that, the key is unknown there: not metered).
  let probes = 0
  for (const gw of instances) {
    const served = await within(
      15_000,
      async () => (await rpc(`${gw.url('eth-1')}?apikey=${created.last.apiKey}`, { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] })).status === 200,
    )
    t.not(served, undefined, `${gw.http} serves the key`)
    probes++
  }
  // The command printed the key's id (its KeyIssued event's): the usage below is counted by it.
  const keyId: string = created.last.keyId

  const clients = new CallLoop(() => url, 4)
  t.teardown(() => clients.stop())
  await clients.more(200)
  for (let i = 0; i < instances.length; i++) {
    instances[i]!.signal('SIGTERM')
    t.same(await instances[i]!.exited, { code: 0, signal: null }, `instance ${i} stops cleanly`)
    await clients.more(200)
    instances[i] = await startGatewayProcess(t, { config: configs[i]! })
    await clients.more(200)
  }
  const counts = await clients.stop()
  t.equal(counts.failed, 0, `no call failed of ${counts.served}: ${counts.failures.join(' | ')}`)

  for (const gw of instances) gw.signal('SIGTERM')
  for (const gw of instances) await gw.exited
  const usage = (await eventsOf(instances[0]!.configPath)).filter((e) => e.type === 'UsageRecorded' && e.keyId === keyId)
  t.equal(new Set(usage.map((e) => e.id)).size, usage.length, 'each usage event stored once')
  t.equal(
    usage.reduce((sum, e) => sum + e.requests, 0),
    counts.served + probes,
    `the usage events add up to the ${counts.served} calls served through nginx and the ${probes} probes, exactly`,
  )
})
