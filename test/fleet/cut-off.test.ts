import t from 'tap'
import { Agent } from 'undici'
import { startAnvil } from '../../harness/anvil.js'
import { startNats } from '../../harness/nats-server.js'
import { begun, runCli, within } from '../helpers/cli.js'
import { chainIdCall, TEST_SECRET } from '../helpers/gateway.js'
import { createAccountKey, metricValue, startFleet } from '../helpers/fleet.js'
import { startTcpLink } from '../helpers/tcp-link.js'

// One instance of three loses NATS (its link is cut; NATS and the others go on): it keeps serving
// with its share of each key's limit (a third of the fleet it last saw), never the whole and never
// nothing, and when the link is back it takes its whole, shared limit again without a burst.
// `tollgate fleet` lists the instances.

const RPS = 60 // set B "starter"
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const nats = await startNats()
t.teardown(() => nats.stop())
const link = await startTcpLink({ port: nats.port })
t.teardown(() => link.close())
// Three instances on one stream; the third reaches NATS through the link the tests cut.
const { gateways } = await startFleet(t, {
  instances: 3,
  natsUrl: nats.url,
  natsUrlOf: (i) => (i === 2 ? link.url : nats.url),
  nodeUrl: anvil.url,
  config: { plans: { catalog: 'set-b' }, limits: { queueMs: 0, ipThrottle: { rejections: 1_000_000 } } },
})
const cutOff = gateways[2]!
// The key of the second test is made while the first one lists the fleet (neither changes what the
// other reads).
const keyMade = begun(createAccountKey(gateways[0]!, 'starter'))
const agent = new Agent({ connections: 8 })
t.teardown(() => agent.close())

const call = async (url: string, key: string): Promise<number> => (await chainIdCall(url, key, agent)).status

/**
 * Calls at `rps` for `seconds` on one instance: how many were served, and over how many seconds
 * they were sent and answered. On a loaded machine the loop falls behind its schedule and the
 * calls take longer than `seconds`: a bucket refills for as long as they do, so a bound on what
 * is served is drawn on that time, not on the schedule's.
 */
async function load(url: string, key: string, rps: number, seconds: number): Promise<{ served: number; tookS: number }> {
  let served = 0
  const started = Date.now()
  const pending: Promise<void>[] = []
  for (let n = 0; n < rps * seconds; n++) {
    const wait = started + (n * 1000) / rps - Date.now()
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    pending.push(call(url, key).then((s) => void (s === 200 && served++)))
  }
  await Promise.all(pending)
  return { served, tookS: Math.max(seconds, (Date.now() - started) / 1000) }
}

t.test('tollgate fleet lists the three instances', async (t) => {
  t.not(await within(15_000, async () => (await metricValue(gateways[0]!, 'tollgate_fleet_instances')) === 3), undefined)
  const out = await runCli(['fleet', '--config', gateways[0]!.configPath, '--json'], { TOLLGATE_SECRET: TEST_SECRET })
  t.equal(out.code, 0, out.stderr)
  const listed = out.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  t.equal(listed.length, 3)
  t.same(new Set(listed.map((m) => m.address)), new Set(gateways.map((g) => g.http.replace('http://', ''))), 'each with its address')
  t.ok(listed.every((m) => m.share === 1 && typeof m.version === 'string' && m.startedAt > 0))
})

t.test('cut off, an instance serves its share; back, its whole limit without a burst', async (t) => {
  const { apiKey } = await keyMade
  t.not(await within(15_000, async () => (await call(cutOff.url('eth-1'), apiKey)) === 200), undefined, 'the key works on the instance to be cut off')
  t.not(await within(15_000, async () => (await metricValue(cutOff, 'tollgate_fleet_instances')) === 3), undefined)

  await link.cut()
  await cutOff.waitForLog((l) => l.msg?.startsWith('cut off from the fleet: applying') && l.share < 1, 15_000)
  // Drain the bucket kept from before the cut, then measure the share's rate.
  await load(cutOff.url('eth-1'), apiKey, RPS, 1)
  const seconds = 3
  const { served, tookS } = await load(cutOff.url('eth-1'), apiKey, RPS, seconds)
  const share = RPS / 3
  t.ok(served <= share * (tookS + 1) * 1.15, `${served} served in ${tookS.toFixed(1)} s at ${RPS}/s offered: about a third of the plan (${share}/s)`)
  t.ok(served >= share * seconds * 0.7, `${served} served: the clients that reach it are still served`)

  await link.restore()
  await cutOff.waitForLog((l) => l.msg === 'back in the fleet: whole limits, shared', 15_000)
  const { served: after, tookS: afterS } = await load(cutOff.url('eth-1'), apiKey, 3 * RPS, 2)
  // The plan's rate, plus at most the share's burst the bucket held when it rejoined; a bucket
  // refilled on rejoining would add the plan's whole burst (180 in all, over 2 s).
  const bound = (RPS * afterS + share) * 1.1
  t.ok(after <= bound, `${after} served in the ${afterS.toFixed(1)} s after rejoining at ${3 * RPS}/s offered: at most ${bound.toFixed(0)}, no burst on top`)
  t.ok(after >= RPS * 2 * 0.6, `${after} served: the whole limit is back`)
})

t.test('a link that drops packets without a reset: the instance stops hearing itself and takes its share', async (t) => {
  // The NATS client still thinks it is connected (its pings take seconds to miss); the fleet
  // notices first, because its own heartbeat no longer comes back.
  const CUT = "cut off from the fleet: applying this share of each key's limits"
  const BACK = 'back in the fleet: whole limits, shared'
  const count = (msg: string): number => cutOff.logs.filter((l) => l.msg === msg).length
  const cutsBefore = count(CUT)
  link.stall()
  // Noticed within silentMs and a heartbeat (4 s by default). A run once waited 45 s in vain: the
  // others had been dropped as silent just before it missed its own heartbeat, and the share of a
  // fleet of one is the whole limit, which changed nothing and logged nothing (fixed, and tested
  // with a fake clock in connection-grants.test.ts).
  const cut = await cutOff.waitForLog((l) => l.msg === CUT && count(CUT) > cutsBefore, 20_000)
  t.equal(cut.share, 1 / 3, 'a third of each limit while its link is stalled: the fleet of three it last heard')
  const backsBefore = count(BACK)
  link.unstall()
  await cutOff.waitForLog((l) => l.msg === BACK && count(BACK) > backsBefore, 30_000)
  t.pass('back in the fleet once the link carries bytes again')
})
