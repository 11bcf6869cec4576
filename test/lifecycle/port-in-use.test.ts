import t, { type Test } from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { within } from '../helpers/cli.js'
import { refusedStart, startGatewayProcess, startWorkersGateway, type GatewayProcess } from '../helpers/gateway-process.js'
import { freePort } from '../../harness/free-port.js'
import { createAccountKey } from '../helpers/fleet.js'
import { chainIdCall } from '../helpers/gateway.js'

// uWS listens with SO_REUSEPORT by default, and Linux lets a second process of the same user bind
// the same port and hands it part of the new connections: a second `tollgate start` on a port in
// use started without a word and answered other gateways' clients ("not a key this gateway
// issued"). A gateway must refuse a port (RPC or admin) another process serves, saying which and
// what to do; the workers of one supervisor share their port on purpose, and nobody else may join them.

// Two gateways that serve and seven that must refuse to start, each loading the gateway: on a loaded
// machine, more than tap's 120 s. Every wait inside has a bound of its own.
t.setTimeout(300_000)
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const networks = { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full' }] } }
const host = '127.0.0.1'

// Two gateways serving, started together and shared by every test below: a supervisor of two
// workers, and a gateway of one process.
const alonePort = await freePort()
const aloneAdmin = await freePort()
const [workers, alone] = await Promise.all([
  startWorkersGateway(t, { workers: 2, config: { networks } }),
  startGatewayProcess(t, { config: { listen: { host, port: alonePort }, admin: { listen: { host, port: aloneAdmin } }, networks } }),
])
const { gateway: supervised, port: workersPort, adminPort: workersAdmin } = workers

/** A call on a connection of its own (Linux picks a listener per connection); its HTTP status. */
const call = async (gateway: GatewayProcess, key: string): Promise<number> => (await chainIdCall(gateway.url('eth-1'), key)).status

/**
 * `tollgate start` on `listen` and `admin`: why it refused (its error, with its stderr). One that
 * started runs to the end of the file (the calls below then show whether it took part of another
 * gateway's traffic), killed by its pid at teardown.
 */
async function refusal(listen: number, admin: number, extra: Record<string, unknown> = {}): Promise<string> {
  return refusedStart(t, { config: { listen: { host, port: listen }, admin: { listen: { host, port: admin } }, networks, ...extra } })
}

// Each refused start is a process of its own (it exits at the first port it cannot have), and none
// depends on another: all seven start at once, each test below checks its own. Each binds only free
// ports of its own, besides the one it is refused.
const refused = {
  alonePort: refusal(alonePort, await freePort()),
  workersPort: refusal(workersPort, await freePort()),
  aloneAdmin: refusal(await freePort(), aloneAdmin),
  workerAdmin: refusal(await freePort(), workersAdmin + 1),
  supervisorOnAlonePort: refusal(alonePort, await freePort(), { workers: 2 }),
  supervisorOnWorkersPort: refusal(workersPort, await freePort(), { workers: 2 }),
  supervisorOnAloneAdmin: refusal(await freePort(), aloneAdmin - 1, { workers: 2 }),
}
const exitsWithOne = (t: Test, why: string): void => void t.match(why, /the gateway exited \(1\)/, 'it exits with code 1')

t.test('a gateway of one process refuses the port of another gateway', async (t) => {
  const why = await refused.alonePort
  exitsWithOne(t, why)
  t.match(why, new RegExp(`cannot listen on ${host}:${alonePort} \\("listen" in the config\\): another process serves that port`))
  t.match(why, /set "listen.port" to a free port/, 'and says what to do')
})

t.test('a gateway of one process refuses the port the workers of a supervisor share', async (t) => {
  const why = await refused.workersPort
  exitsWithOne(t, why)
  t.match(why, new RegExp(`cannot listen on ${host}:${workersPort} \\("listen" in the config\\): another process serves that port`))
})

t.test("a gateway refuses an admin port in use: the other gateway's, or a worker's", async (t) => {
  const why = await refused.aloneAdmin
  exitsWithOne(t, why)
  t.match(why, new RegExp(`cannot listen on ${host}:${aloneAdmin} \\("admin.listen" in the config\\): another process serves that port`))
  const worker = await refused.workerAdmin
  exitsWithOne(t, worker)
  t.match(worker, new RegExp(`cannot listen on ${host}:${workersAdmin + 1} \\("admin.listen"`))
})

t.test('a supervisor refuses a port another process serves, before starting any worker', async (t) => {
  const why = await refused.supervisorOnAlonePort
  exitsWithOne(t, why)
  t.match(why, new RegExp(`cannot listen on ${host}:${alonePort} \\("listen" in the config\\): another process serves that port`))
  const claimed = await refused.supervisorOnWorkersPort
  exitsWithOne(t, claimed)
  t.match(
    claimed,
    new RegExp(`cannot listen on ${host}:${workersPort} \\("listen" in the config\\): a gateway supervising 2 workers \\(pid \\d+\\) claims that port`),
    "another supervisor's port",
  )
  const busyAdmin = await refused.supervisorOnAloneAdmin
  exitsWithOne(t, busyAdmin)
  t.match(busyAdmin, new RegExp(`worker 1 has its admin listener on admin.listen.port \\+ 1: cannot listen on ${host}:${aloneAdmin}`), "a worker's admin port")
})

t.test('each gateway still gets every call on its port', async (t) => {
  const [onSupervised, onAlone] = await Promise.all([createAccountKey(supervised, 'tier-3'), createAccountKey(alone, 'tier-3')])
  const keys = { supervised: onSupervised.apiKey, alone: onAlone.apiKey }
  t.not(await within(15_000, async () => (await call(supervised, keys.supervised)) === 200), undefined, "the supervisor's workers serve their new key")
  t.not(await within(15_000, async () => (await call(alone, keys.alone)) === 200), undefined, 'the other gateway serves its new key')
  const statuses = { supervised: [] as number[], alone: [] as number[] }
  for (let i = 0; i < 12; i++) {
    statuses.supervised.push(await call(supervised, keys.supervised))
    statuses.alone.push(await call(alone, keys.alone))
  }
  t.same(statuses.supervised, Array(12).fill(200), '12 calls on new connections to the workers: all answered by them')
  t.same(statuses.alone, Array(12).fill(200), '12 calls on new connections to the other gateway: all answered by it')
})
