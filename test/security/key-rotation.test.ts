import t from 'tap'
import { Agent } from 'undici'
import { startAnvil } from '../../harness/anvil.js'
import { runCli } from '../helpers/cli.js'
import { until } from '../helpers/eventually.js'
import { chainIdCall, TEST_SECRET } from '../helpers/gateway.js'
import { startGatewayProcess } from '../helpers/gateway-process.js'
import { connectWs, type WsClient } from '../helpers/ws-client.js'
import { join } from 'node:path'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { StateStore } from '../../src/store/state-store.js'
import { EmbeddedLog } from '../../src/events/embedded-log.js'
import { regenerateKey } from '../../src/accounts/commands.js'
import { loadPlanCatalog } from '../../src/plans/catalog.js'
import { KeyCipher } from '../../src/keys/key-cipher.js'
import { systemClock } from '../../actors/runtime/clock.js'

// Ten regenerations with a grace period, then load on every key the account ever had: the keys
// still alive are one credential being rotated and share one budget. Before, each key in its grace
// period had the plan's full rate and its own WebSocket connections.

const env = { TOLLGATE_SECRET: TEST_SECRET }
const RPS = 60 // set B "starter"
const MAX_WS = 4
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const gw = await startGatewayProcess(t, {
  config: {
    networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full' }] } },
    plans: { catalog: 'set-b' },
    // No queueing: a call over the rate is answered 429 at once, so the count is the decision's.
    // The load below makes thousands of 429s from 127.0.0.1 in 3 s; the IP throttle (2,000 in
    // 10 s by default) would then refuse the WebSocket upgrades of the last test for a minute,
    // which is that throttle's test, not this one's.
    limits: { queueMs: 0, ipThrottle: { rejections: 1_000_000 } },
    ws: { maxConnectionsPerKey: MAX_WS, newConnectionsPerSecond: 100 },
  },
})
const created = await runCli(
  ['accounts', 'create', '--config', gw.configPath, '--wallet', `0x${'6'.repeat(40)}`, '--plan', 'starter', '--nodes', 'eth-1:full'],
  env,
)
t.equal(created.code, 0, created.stderr)
const keys: string[] = [created.last.apiKey]

t.test('ten regenerations with an hour of grace', async (t) => {
  // Through the account commands on the gateway's own event log (what `tollgate keys regenerate`
  // runs): ten CLI processes took minutes on a loaded 2-core machine. The 11th goes through the CLI.
  const log = EmbeddedLog.open(join(gw.dataDir, 'log'))
  const scratch = await mkdtemp(join(tmpdir(), 'tollgate-rotation-'))
  const store = StateStore.open(join(scratch, 'state'))
  t.teardown(async () => {
    await store.close()
    await log.close()
    await rm(scratch, { recursive: true, force: true })
  })
  const deps = { log, store, catalog: loadPlanCatalog('set-b'), cipher: KeyCipher.fromSecret(TEST_SECRET), clock: systemClock }
  for (let i = 0; i < 10; i++) keys.push((await regenerateKey(deps, { accountId: created.last.accountId, graceMs: 3_600_000 })).apiKey)
  t.equal(new Set(keys).size, 11)
})

t.test('the 11th regeneration within the hour is refused with a clear message', async (t) => {
  const out = await runCli(['keys', 'regenerate', '--config', gw.configPath, '--account', created.last.accountId], env)
  t.not(out.code, 0)
  t.match(out.stderr, /regenerated 10 times in the last hour/)
})

t.test('every key the account had, loaded at once, is served at most the plan rate', async (t) => {
  // Wait (bounded) until the last key works: the gateway has projected every regeneration.
  const agent = new Agent({ connections: 4 })
  t.teardown(() => agent.close())
  const call = async (key: string): Promise<number> => (await chainIdCall(gw.url('eth-1'), key, agent)).status
  t.ok(await until(async () => (await call(keys.at(-1)!)) === 200), 'the last key is served')
  // No wait for the bucket to fill again after that probe: a bucket never holds more than one
  // burst, so the bound below (a burst plus the rate over the load) holds whatever it holds now,
  // and what the probe took only lowers what can be served.
  const statuses = new Map<number, number>()
  // Per key: the statuses it got (a key is live, or past the live-keys bound, for the whole load).
  const byKey = keys.map(() => new Map<number, number>())
  // The gateway is a process whose clock the test cannot move, so the load lasts a while of this
  // machine's time: 3 s at least, and on until the live keys have been served a burst, so that how
  // many calls a loaded machine gets through in 3 s does not decide the lower bound below. The
  // upper bound is reckoned from the time the load lasted as measured here: a slower machine
  // widens it, it does not fail it.
  const started = Date.now()
  const loadUntil = started + 3_000
  // Outer bound, so that the test cannot hang if the live keys are never served a burst.
  const giveUpAt = started + 60_000
  const loading = (): boolean => (Date.now() < loadUntil || (statuses.get(200) ?? 0) < RPS) && Date.now() < giveUpAt
  await Promise.all(
    keys.flatMap((key, k) =>
      [0, 1].map(async () => {
        while (loading()) {
          const status = await call(key)
          statuses.set(status, (statuses.get(status) ?? 0) + 1)
          byKey[k].set(status, (byKey[k].get(status) ?? 0) + 1)
        }
      }),
    ),
  )
  const seconds = (Date.now() - started) / 1000
  const served = statuses.get(200) ?? 0
  const tally = [...statuses].map(([s, n]) => `${s}: ${n}`).join(', ')
  // The bucket's burst (one second of the rate) plus the rate over the time the load lasted.
  const allowed = RPS * (seconds + 1)
  t.ok(served <= allowed * 1.05, `${served} calls served in ${seconds.toFixed(2)} s: at most 1.05 x ${allowed.toFixed(0)} (${tally})`)
  t.ok(served >= RPS, 'the live keys are served')
  const live = byKey.filter((m) => m.has(200))
  const dead = byKey.filter((m) => !m.has(200))
  // What the live keys were not served was refused as over the rate, whatever the machine's speed:
  // how many calls the client could send in 3 s (on a loaded machine, fewer than the rate allows,
  // and then none is refused) decides how many 429s there are, not whether a refusal is one.
  t.same(
    live.flatMap((m) => [...m.keys()].filter((s) => s !== 200 && s !== 429)),
    [],
    `the live keys' calls were served or refused as over the rate (${tally})`,
  )
  t.ok(dead.length > 0 && dead.every((m) => m.size === 1 && m.has(401)), `keys past the live-keys bound are refused outright, every call (${dead.length} keys)`)
})

t.test('the live keys share one set of WebSocket connections', async (t) => {
  // Connections stay open until the end of the test, so each one holds its slot.
  const tries = await Promise.allSettled(keys.flatMap((key) => [0, 1].map(() => connectWs(`${gw.ws}/ws/eth-1?apikey=${key}`))))
  const open = tries.filter((r): r is PromiseFulfilledResult<WsClient> => r.status === 'fulfilled').map((r) => r.value)
  t.teardown(() => Promise.all(open.map((c) => c.close())))
  t.equal(open.length, MAX_WS, `${open.length} connections opened across ${keys.length} keys: the account's ${MAX_WS}`)
})
