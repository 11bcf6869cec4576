import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc, TEST_SECRET } from '../helpers/gateway.js'
import { runCli, within } from '../helpers/cli.js'

// The gateway learns of keys made or changed on the command line through its event log: each
// wait below is bounded by 10 s so that the test cannot hang, and the time it took is reported,
// not asserted (how fast the projection runs is the speed of the machine; see bench/).
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { StateStore } from '../../src/store/state-store.js'
import { stateDigest } from '../../src/projections/replay.js'

// The command line against a running gateway that shares its event log (the embedded one here).
// Keys are made with the command line here, not by the fixture.
const { tg, url } = await anvilGateway(t, { nodeWs: false, plan: null })
const call = { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }
const env = { TOLLGATE_SECRET: TEST_SECRET }
const wallet = '0x1111111111111111111111111111111111111111'

const created = await runCli(['accounts', 'create', '--config', tg.configPath, '--wallet', wallet, '--plan', 'tier-1', '--nodes', 'eth-1:full'], env)
t.equal(created.code, 0, created.stderr)
t.match(created.last, { accountId: /^acc_/, apiKey: /^tg_/ })
const key1: string = created.last.apiKey

t.test('a key created from the command line works once the gateway has it', async (t) => {
  const took = await within(10_000, async () => (await rpc(url, call, { apiKey: key1 })).status === 200)
  t.ok(took !== undefined, `works after ${took} ms`)
})

t.test('a regenerated key works and its predecessor stops', async (t) => {
  const regen = await runCli(['keys', 'regenerate', '--config', tg.configPath, '--account', created.last.accountId], env)
  t.equal(regen.code, 0, regen.stderr)
  const key2: string = regen.last.apiKey
  t.not(key2, key1)
  const newWorks = await within(10_000, async () => (await rpc(url, call, { apiKey: key2 })).status === 200)
  t.ok(newWorks !== undefined, 'the new key works')
  const oldStops = await within(10_000, async () => (await rpc(url, call, { apiKey: key1 })).status === 401)
  t.ok(oldStops !== undefined, `the old key is refused after ${oldStops} ms`)
  const refused = await rpc(url, call, { apiKey: key1 })
  t.match(refused.json.error.message, /regenerated|revoked/)
})

t.test('events lists the log as JSON lines without any key in clear', async (t) => {
  const out = await runCli(['events', '--config', tg.configPath], env)
  t.equal(out.code, 0, out.stderr)
  const lines = out.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  t.ok(lines.length >= 4)
  for (const [i, e] of lines.entries()) {
    t.equal(e.seq, i + 1)
    t.type(e.type, 'string')
    t.type(e.time, 'number')
  }
  t.ok(lines.some((e) => e.type === 'KeyIssued' && e.accountId === created.last.accountId))
  t.notMatch(out.stdout, /tg_[0-9A-Za-z]{38}/, 'no key in clear')
})

t.test('start refuses to run without TOLLGATE_SECRET and says so', async (t) => {
  const out = await runCli(['start', '--config', tg.configPath], { TOLLGATE_SECRET: '' })
  t.not(out.code, 0)
  t.match(out.stderr, /TOLLGATE_SECRET/)
})

t.test('a bad command line is refused with the usage', async (t) => {
  const out = await runCli(['accounts', 'create', '--config', tg.configPath, '--wallet', 'nope', '--plan', 'tier-1'], env)
  t.not(out.code, 0)
  t.match(out.stderr, /wallet/i)
  const unknownPlan = await runCli(['accounts', 'create', '--config', tg.configPath, '--wallet', wallet, '--plan', 'gold'], env)
  t.not(unknownPlan.code, 0)
  t.match(unknownPlan.stderr, /tier-1/)
})

t.test('replay rebuilds the same state as the live projections', async (t) => {
  await tg.stop()
  const store = StateStore.open(join(tg.dataDir, 'state'))
  const live = stateDigest(store)
  store.close()
  const first = await runCli(['replay', '--config', tg.configPath], env)
  t.equal(first.code, 0, first.stderr)
  t.ok(first.last.events > 0)
  t.equal(first.last.digest, live, 'replayed state has the digest of the live state')
  rmSync(join(tg.dataDir, 'state'), { recursive: true, force: true })
  const second = await runCli(['replay', '--config', tg.configPath], env)
  t.equal(second.code, 0, second.stderr)
  t.equal(second.last.digest, live, 'and so does a state rebuilt from an empty folder')
})
