import t, { type Test } from 'tap'
import { Agent, request } from 'undici'
import { startAnvil } from '../helpers/anvil.js'
import { startNats } from '../helpers/nats-server.js'
import { runCli, within } from '../helpers/cli.js'
import { TEST_SECRET } from '../helpers/gateway.js'
import { createAccountKey, metricValue, startFleet } from '../helpers/fleet.js'
import { connectWs } from '../helpers/ws-client.js'

// What is decided through one instance (or the command line) is enforced by every instance of
// the fleet within a second: a new account, a regenerated key, a change of nodes, a WebSocket
// penalty, an IP throttle. Each is measured from the moment it was decided to the moment each
// instance enforces it, polling every 10 ms; the figures are in the assertions' messages.

const CONVERGED_MS = 1_000
const env = { TOLLGATE_SECRET: TEST_SECRET }
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const nats = await startNats()
t.teardown(() => nats.stop())
const network = { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full' }] }
const { gateways } = await startFleet(t, {
  instances: 3,
  natsUrl: nats.url,
  nodeUrl: anvil.url,
  config: {
    networks: { 'eth-1': network, 'eth-2': network },
    plans: { catalog: 'set-b' },
    limits: { queueMs: 0, ipThrottle: { rejections: 30, windowMs: 10_000, durationMs: 60_000 } },
  },
})
const agent = new Agent({ connections: 16 })
t.teardown(() => agent.close())
for (const gw of gateways) await within(15_000, async () => (await metricValue(gw, 'tollgate_fleet_instances')) === 3)

async function call(url: string, key: string): Promise<{ status: number; body: string }> {
  const res = await request(`${url}?apikey=${key}`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
  })
  return { status: res.statusCode, body: await res.body.text() }
}

/** From `since`, the ms until every instance passes `enforced` (polled every 10 ms, up to 10 s). */
async function convergence(since: number, enforced: (gw: (typeof gateways)[number]) => Promise<boolean>): Promise<number[]> {
  return Promise.all(
    gateways.map(async (gw) => {
      for (;;) {
        if (await enforced(gw)) return Date.now() - since
        if (Date.now() - since > 10_000) return Number.POSITIVE_INFINITY
        await new Promise((r) => setTimeout(r, 10))
      }
    }),
  )
}

function check(t: Test, what: string, ms: number[]): void {
  t.ok(Math.max(...ms) <= CONVERGED_MS, `${what}: enforced by the 3 instances after ${ms.map((m) => `${m} ms`).join(', ')}`)
}

let key = ''
let accountId = ''

t.test('a new account', async (t) => {
  ;({ apiKey: key, accountId } = await createAccountKey(gateways[0]!, 'starter'))
  check(t, 'an account created', await convergence(Date.now(), async (gw) => (await call(gw.url('eth-1'), key)).status === 200))
})

t.test('a change of nodes', async (t) => {
  for (const gw of gateways) t.equal((await call(gw.url('eth-2'), key)).status, 403, 'eth-2 is not among its nodes yet')
  const out = await runCli(['accounts', 'nodes', '--config', gateways[1]!.configPath, '--account', accountId, '--nodes', 'eth-2:full'], env)
  t.equal(out.code, 0, out.stderr)
  check(t, 'nodes changed to eth-2', await convergence(Date.now(), async (gw) => (await call(gw.url('eth-2'), key)).status === 200))
})

t.test('a WebSocket penalty', async (t) => {
  const sockets = await Promise.all(gateways.map((gw) => connectWs(`${gw.ws}/ws/eth-2?apikey=${key}`)))
  t.teardown(() => Promise.all(sockets.map((s) => s.close())))
  for (let i = 0; i < 21; i++) await sockets[0]!.call('{not json')
  const since = Date.now()
  let n = 0
  const ms = await convergence(since, async (gw) => {
    const answer = await sockets[gateways.indexOf(gw)]!.call({ jsonrpc: '2.0', id: `p${n++}`, method: 'eth_chainId', params: [] })
    return answer.error?.code === -32032
  })
  check(t, 'a penalty imposed on one instance', ms)
})

t.test('a regenerated key', async (t) => {
  const out = await runCli(['keys', 'regenerate', '--config', gateways[2]!.configPath, '--account', accountId, '--grace', '0'], env)
  t.equal(out.code, 0, out.stderr)
  check(t, 'the old key refused', await convergence(Date.now(), async (gw) => (await call(gw.url('eth-2'), key)).status === 401))
})

t.test("an IP throttle (last: it throttles this test's IP)", async (t) => {
  const { apiKey } = await createAccountKey(gateways[0]!, 'free')
  t.not(await within(10_000, async () => (await call(gateways[1]!.url('eth-1'), apiKey)).status === 200), undefined)
  // A free key allows 2 calls a second: 40 at once on one instance are 38 rejections, past 30.
  await Promise.all(Array.from({ length: 40 }, () => call(gateways[0]!.url('eth-1'), apiKey)))
  const since = Date.now()
  const ms = await convergence(since, async (gw) => /from this IP address/.test((await call(gw.url('eth-1'), apiKey)).body))
  check(t, 'an IP throttled by one instance', ms)
})
