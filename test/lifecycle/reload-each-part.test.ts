import t from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { startAnvil } from '../../harness/anvil.js'
import { parseConfig } from '../../src/config/load.js'
import type { Config } from '../../src/config/types.js'
import type { ReloadOutcome } from '../../src/main/reload.js'
import { waitFor } from '../helpers/eventually.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metric } from '../helpers/metrics.js'
import type { CatalogPlan } from '../helpers/plan-catalog.js'

// Each part a reload changes, changed alone on a running gateway and checked where a client or an
// operator sees it: the calls' answers, /metrics, and the reload's own report. Real anvil behind
// fault proxies; the gateway in this process, reloaded as SIGHUP reloads it (gateway.reload).

// EVM runs of millions of gas, on a shared machine: more than the default two minutes.
t.setTimeout(300_000)
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
await anvil.rpc('anvil_mine', ['0x10'])
// eth-1 on a (then b); eth-2 verifies calls on two more (trusted headers need two nodes agreeing).
const [a, b, v1, v2] = await Promise.all([0, 1, 2, 3].map(() => startFaultProxy(anvil)))
t.teardown(() => Promise.all([a, b, v1, v2].map((p) => p!.close())))
const nodeA = { url: a!.url, name: 'a', kind: 'full' as const }
const nodeB = { url: b!.url, name: 'b', kind: 'full' as const }
const verifying = {
  chainId: 31337,
  verify: 'calls' as const,
  upstreams: [
    { url: v1!.url, name: 'v1', kind: 'full' as const },
    { url: v2!.url, name: 'v2', kind: 'full' as const },
  ],
}
const GAS_CAP = 3_000_000
const tg = await startTestGateway(t, {
  networks: { 'eth-1': { chainId: 31337, upstreams: [nodeA] }, 'eth-2': verifying },
  quiet: true,
  config: { cache: { enabled: false }, hedge: { enabled: false }, evm: { gasCap: GAS_CAP, timeoutMs: 60_000 } },
})
const { apiKey } = await tg.createKey('tier-3')
// The default catalog with Tier 3 at one call a second: the plan a reload of the catalog moves keys to.
const slowCatalog = join(tg.dataDir, 'slow.json')
{
  const catalog = JSON.parse(await readFile(new URL('../../schemas/catalogs/default.json', import.meta.url), 'utf8')) as { plans: CatalogPlan[] }
  for (const plan of catalog.plans) if (plan.id === 'tier-3') plan.limits = { ...plan.limits, fullRps: 1 }
  await writeFile(slowCatalog, JSON.stringify({ ...catalog, name: 'slow' }))
}
/** The config in force, as the last applied reload left it. */
let running: Config = tg.config
/** Reload with `change` over the running config; an applied one becomes the running config. */
function reload(change: (c: Config) => Record<string, unknown>): ReloadOutcome {
  const next = parseConfig({ ...running, ...change(running) }, 'test')
  const outcome = tg.gateway.reload(next)
  if (outcome.applied) running = next
  return outcome
}
const changes = (o: ReloadOutcome) => (o.applied ? o.changes : { notApplied: o })
const call = (method: string, params: unknown[] = [], id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params })
const send = (body: unknown, network = 'eth-1') => rpc(tg.url(network), body, { apiKey })
/** PUSH3 n, then n times JUMPDEST PUSH1 1 SWAP1 SUB DUP1 PUSH1 4 JUMPI (26 gas), STOP: creation code that burns gas and returns nothing. */
const countdown = (n: number) => `0x62${n.toString(16).padStart(6, '0')}5b600190038060045700`

t.test('nodes: a node added and the old one removed; calls go to the new one, /metrics drops the old', async (t) => {
  t.equal((await send(call('eth_blockNumber'))).status, 200)
  const outcome = reload((c) => ({ networks: { ...c.networks, 'eth-1': { chainId: 31337, upstreams: [nodeB] } } }))
  t.same(changes(outcome), { nodes: [{ network: 'eth-1', added: ['b'], removed: ['a'], changed: [] }] }, 'the report names the nodes')
  // A method the head monitor never asks (it polls the new node at once): only the client's call counts.
  const [atA, atB] = [a!.received('eth_gasPrice'), b!.received('eth_gasPrice')]
  const r = await send(call('eth_gasPrice'))
  t.equal(r.status, 200)
  t.equal(b!.received('eth_gasPrice'), atB + 1, 'the call went to node b')
  t.equal(a!.received('eth_gasPrice'), atA, 'not to node a')
  t.equal(await metric(tg.gateway.admin, 'tollgate_upstream_healthy', { network: 'eth-1', node: 'a' }), undefined, 'node a is out of /metrics')
  t.ok((await metric(tg.gateway.admin, 'tollgate_upstream_healthy', { network: 'eth-1', node: 'b' })) !== undefined, 'node b is in')
})

t.test("limits.maxBatch: the dispatcher reads the limits in force (the next batch's bound)", async (t) => {
  const batch = [call('eth_chainId', [], 1), call('eth_chainId', [], 2), call('eth_chainId', [], 3)]
  t.equal((await send(batch)).status, 200, 'three calls in a batch are served')
  const outcome = reload((c) => ({ limits: { ...c.limits, maxBatch: 2 } }))
  t.same(changes(outcome), { limits: ['limits.maxBatch'] })
  const refused = await send(batch)
  t.equal(refused.status, 413, 'BATCH_TOO_LARGE')
  t.match(refused.json.error?.message, /at most 2 are accepted/, 'naming the new bound')
  reload((c) => ({ limits: { ...c.limits, maxBatch: 100 } }))
  t.equal((await send(batch)).status, 200, 'and back')
})

t.test("limits.upstreamTimeoutMs: the caller's time-out of the next calls", async (t) => {
  b!.set('eth_gasPrice', { delayMs: 1500 })
  t.teardown(() => b!.clear('eth_gasPrice'))
  t.same(changes(reload((c) => ({ limits: { ...c.limits, upstreamTimeoutMs: 300 } }))), { limits: ['limits.upstreamTimeoutMs'] })
  const cut = await send(call('eth_gasPrice'))
  t.ok(cut.json.error !== undefined && cut.json.result === undefined, `a node slower than 300 ms: the call times out (${cut.text})`)
  reload((c) => ({ limits: { ...c.limits, upstreamTimeoutMs: 10_000 } }))
  const served = await send(call('eth_gasPrice'))
  t.ok(served.json.result !== undefined, `with 10 s, the same call is answered (${served.text})`)
})

t.test('networks.<slug>.forwardMethods: the method rules of the next call', async (t) => {
  t.equal((await send(call('ots_getApiLevel'))).json.error?.code, -32601, 'an unlisted method is refused')
  const outcome = reload((c) => ({ networks: { ...c.networks, 'eth-1': { ...c.networks['eth-1'], forwardMethods: ['ots_getApiLevel'] } } }))
  t.same(changes(outcome), { networks: ['networks.eth-1.forwardMethods'] })
  const forwarded = await send(call('ots_getApiLevel'))
  t.ok(forwarded.json.result !== undefined, `forwarded once the network allows it (${forwarded.text})`)
})

t.test('plans.catalog and limits.queueMs: the keys take the new plan, the charge the new wait', async (t) => {
  const burst = async (n: number) => (await Promise.all(Array.from({ length: n }, (_, i) => send(call('eth_chainId', [], i))))).map((r) => r.status)
  t.same(new Set(await burst(5)), new Set([200]), 'Tier 3 of the default catalog serves five at once')
  const outcome = reload((c) => ({ plans: { catalog: slowCatalog }, limits: { ...c.limits, queueMs: 0 } }))
  t.same(changes(outcome), { plans: { added: [], removed: [], changed: ['tier-3'], catalog: 'slow' }, limits: ['limits.queueMs'] })
  const refused = await burst(10)
  t.ok(refused.includes(429), `at one call a second, queueMs 0: calls over the rate are refused at once (${refused})`)
  t.same(changes(reload((c) => ({ limits: { ...c.limits, queueMs: 10_000 } }))), { limits: ['limits.queueMs'] })
  // Over the rate, but within what 10 s of queueing holds: each waits for its token, none is refused.
  t.same(new Set(await burst(3)), new Set([200]), 'with queueMs 10 s, calls over the rate wait for their tokens')
  reload(() => ({ plans: { catalog: 'default' } }))
  t.same(new Set(await burst(5)), new Set([200]), 'the default catalog again')
})

t.test("evm.gasCap and evm.timeoutMs: the verified eth_call's bounds of the next run", async (t) => {
  const needs5M = call('eth_call', [{ data: countdown(200_000) }, 'latest'], 'cap')
  const capped = await send(needs5M, 'eth-2')
  t.equal(capped.json.error?.code, -32041, `VERIFY_GAS_CAPPED at ${GAS_CAP} (${capped.text})`)
  t.match(capped.json.error?.message, new RegExp(String(GAS_CAP)))
  t.same(changes(reload((c) => ({ evm: { ...c.evm, gasCap: 30_000_000 } }))), { evm: ['evm.gasCap'] })
  t.same((await send(needs5M, 'eth-2')).json, { jsonrpc: '2.0', id: 'cap', result: '0x' }, 'within the new cap: answered')

  // An endless loop (JUMPDEST PUSH1 0 JUMP) given the block's 30M gas runs to the budget, which the
  // error names. The nodes say it reverted: an answer the run must check, so the gateway runs it
  // (anvil's own out-of-gas error would be the client's answer, with no run).
  for (const v of [v1!, v2!]) v.set('eth_call', { answerError: { code: 3, message: 'execution reverted', data: '0x' } })
  t.teardown(() => {
    for (const v of [v1!, v2!]) v.clear('eth_call')
  })
  t.same(changes(reload((c) => ({ evm: { ...c.evm, timeoutMs: 250 } }))), { evm: ['evm.timeoutMs'] })
  const loop = call('eth_call', [{ data: '0x5b600056', gas: '0x1c9c380' }, 'latest'], 'loop')
  const stopped = await send(loop, 'eth-2')
  t.equal(stopped.json.error?.code, -32042, `VERIFY_RUN_TIMEOUT (${stopped.text})`)
  t.match(stopped.json.error?.message, /250 ms/)
  t.same(changes(reload((c) => ({ evm: { ...c.evm, timeoutMs: 400 } }))), { evm: ['evm.timeoutMs'] })
  t.match((await send({ ...loop, id: 'loop2' }, 'eth-2')).json.error?.message, /400 ms/, 'the next run has the new budget')
})

t.test('evm.workers is refused by name as needing a restart; nothing of the file applied', async (t) => {
  const outcome = reload((c) => ({ evm: { ...c.evm, workers: c.evm.workers + 1 }, limits: { ...c.limits, maxBatch: 1 } }))
  t.same(outcome, { applied: false, restart: ['evm.workers'] })
  t.equal((await send([call('eth_chainId', [], 1), call('eth_chainId', [], 2)])).status, 200, 'maxBatch stays as it was')
})

t.test('a reload that changes nothing reports nothing', async (t) => {
  t.same(changes(reload(() => ({}))), {})
})

// Last: it throttles the test's own address for a moment.
t.test("limits.ipThrottle: the client IP's throttle counts the next rejections against the new bound", async (t) => {
  const burst = async (n: number) => (await Promise.all(Array.from({ length: n }, (_, i) => send(call('eth_chainId', [], i))))).map((r) => r.status)
  reload((c) => ({ plans: { catalog: slowCatalog }, limits: { ...c.limits, queueMs: 0 } }))
  t.ok((await burst(10)).includes(429), 'over the rate of Tier 3 at one call a second')
  const other = await tg.createKey('tier-3')
  const before = await rpc(tg.url('eth-1'), call('eth_chainId'), { apiKey: other.apiKey })
  t.equal(before.status, 200, 'under the default ipThrottle (2000 rejections), another key of the same IP is served')
  const outcome = reload((c) => ({ limits: { ...c.limits, ipThrottle: { rejections: 3, windowMs: 60_000, durationMs: 1000 } } }))
  t.same(changes(outcome), { limits: ['limits.ipThrottle.rejections', 'limits.ipThrottle.windowMs', 'limits.ipThrottle.durationMs'] })
  t.ok((await burst(10)).includes(429), 'rejected again, now past the new bound')
  const throttled = await rpc(tg.url('eth-1'), call('eth_chainId'), { apiKey: other.apiKey })
  t.equal(throttled.status, 429, `the IP is throttled for every key (${throttled.text})`)
  t.match(throttled.json.error?.message, /\(3 rejected within 60 s\)/, 'naming the new bound')
  // The default plans and throttle again, so that waiting calls are neither over a rate nor counted.
  reload((c) => ({ plans: { catalog: 'default' }, limits: { ...c.limits, ipThrottle: tg.config.limits.ipThrottle } }))
  await waitFor(async () => (await rpc(tg.url('eth-1'), call('eth_chainId'), { apiKey: other.apiKey })).status === 200, 'the 1 s throttle to end')
})
