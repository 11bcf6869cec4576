import t from 'tap'
import { receiptOf, startAnvil } from '../../harness/anvil.js'
import { METHODS } from '../../src/rpc/method-table.js'
import { tokenInitCode } from '../helpers/contracts.js'
import { waitFor } from '../helpers/eventually.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metric, metricNow, metricsPage } from '../helpers/metrics.js'
import { usageEventsOf } from '../helpers/usage-events.js'

// A run of the gateway's EVM (verify: calls) is bounded, off the event loop and charged: its gas
// capped (evm.gasCap, the block's gas limit), a wall-clock budget (evm.timeoutMs) in a worker
// thread, the access lists counted against the bound before any proof, charged by the gas it ran.
// And a node is counted only where the run is the proof: an honest anvil's errors for an invalid
// opcode, running out of gas, a value above the balance and gas below the intrinsic cost are the
// client's answer, no node counted. Real anvil behind fault proxies.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
await anvil.rpc('anvil_mine', ['0x46'])
// An ERC-20 (storage, code) deployed by anvil's first account; an address nothing touched.
const [eoa] = (await anvil.rpc('eth_accounts')).result as string[]
const deployed = await anvil.rpc('eth_sendTransaction', [{ from: eoa, data: tokenInitCode(eoa as `0x${string}`) }])
const busy = { eoa: eoa!, token: (await receiptOf(anvil, deployed.result)).contractAddress as string, absent: '0x00000000000000000000000000000000000a75e1' }
await anvil.rpc('anvil_mine', ['0x2'])
const [honest, alsoHonest, reverter] = await Promise.all([0, 1, 2].map(() => startFaultProxy(anvil)))
t.teardown(() => Promise.all([honest, alsoHonest, reverter].map((p) => p!.close())))
// Says every eth_call reverted with empty data: a node's answer a run must check, so the loop runs.
reverter!.set('eth_call', { answerError: { code: 3, message: 'execution reverted', data: '0x' } })

const GAS_CAP = 3_000_000
const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: 31337,
      verify: 'calls',
      upstreams: [
        { url: honest!.url, name: 'honest', kind: 'full' },
        { url: alsoHonest!.url, name: 'also-honest', kind: 'full' },
      ],
    },
  },
  config: { diagnostics: { responseHeaders: true }, cache: { enabled: false }, evm: { gasCap: GAS_CAP, timeoutMs: 60_000 } },
})
// A short budget: the endless loop is stopped after it, whatever the machine's load.
const short = await startTestGateway(t, {
  networks: { 'eth-1': { chainId: 31337, verify: 'calls', upstreams: [{ url: reverter!.url, name: 'reverter', kind: 'full' }] } },
  // One heavy call of a key at once, refused at once past it: a verified call is one.
  config: { diagnostics: { responseHeaders: true }, cache: { enabled: false }, evm: { timeoutMs: 250 }, heavy: { atOnce: 1, atOnceWaitMs: 0 } },
})
const call = (params: unknown[], id: number | string = 1) => ({ jsonrpc: '2.0', id, method: 'eth_call', params })
const truth = async (params: unknown[]) => {
  const r = await anvil.rpc('eth_call', params)
  delete r.id
  return r
}
/** PUSH3 n, then n times JUMPDEST PUSH1 1 SWAP1 SUB DUP1 PUSH1 4 JUMPI (26 gas), STOP: creation code that burns gas and returns nothing. */
const countdown = (n: number) => `0x62${n.toString(16).padStart(6, '0')}5b600190038060045700`
const failedChecks = async (gateway: typeof tg) =>
  (await metricsPage(gateway.gateway.admin)).split('\n').filter((l) => l.startsWith('tollgate_verify_failed_total{')).length

t.test('an endless loop runs off the event loop: another tenant is answered meanwhile, the loop ends with VERIFY_RUN_TIMEOUT', async (t) => {
  const looper = await short.createKey('tier-3')
  const other = await short.createKey('tier-3')
  // JUMPDEST PUSH1 0 JUMP: an endless loop as creation code, given 100M gas (capped at the block's 30M).
  const loop = rpc(short.url('eth-1'), call([{ data: '0x5b600056', gas: '0x5f5e100' }, 'latest'], 'loop'), { apiKey: looper.apiKey })
  const events: string[] = []
  let ended = false
  void loop.finally(() => {
    ended = true
    events.push('loop answered')
  })
  // The run starts once its state is proven: the proofs reached the node.
  await waitFor(() => reverter!.received('eth_getProof') > 0 || ended, 'the loop call proving its state')
  while (!ended) {
    const r = await rpc(short.url('eth-1'), { jsonrpc: '2.0', id: 2, method: 'eth_blockNumber', params: [] }, { apiKey: other.apiKey })
    if (!ended) events.push(r.json?.result === undefined ? 'other failed' : 'other answered')
  }
  const answered = events.indexOf('loop answered')
  t.ok(
    events.slice(0, answered).filter((e) => e === 'other answered').length >= 3,
    `the other tenant's calls were answered while the loop ran (${events.slice(0, answered).length} before it ended)`,
  )
  const r = await loop
  t.equal(r.json.error?.code, -32042, `VERIFY_RUN_TIMEOUT (${JSON.stringify(r.json.error)})`)
  t.match(r.json.error?.message, /250 ms/, 'naming the budget')
  t.equal(await failedChecks(short), 0, 'no node counted: the run was stopped, nothing contradicts the node')
  const after = await rpc(short.url('eth-1'), call([{ to: busy.token, data: '0x18160ddd' }, 'latest'], 'after'), { apiKey: other.apiKey })
  t.ok(after.json !== undefined, 'a stopped thread is replaced: the next verified call is run')
})

t.test("a verified call takes one of its key's heavy calls at once", async (t) => {
  const { apiKey } = await short.createKey('tier-3')
  // Two loops (different gas: not one call shared in flight) of one key at once.
  const [a, b] = await Promise.all(
    ['0x5f5e100', '0x5f5e0ff'].map((gas, i) => rpc(short.url('eth-1'), call([{ data: '0x5b600056', gas }, 'latest'], i), { apiKey })),
  )
  const codes = [a!, b!].map((r) => r.json.error?.code as number).sort((x, y) => x - y)
  t.same(codes, [-32042, -32005], `one ran to its budget, the other was refused (${JSON.stringify([a!.json, b!.json])})`)
  t.ok(
    [a!, b!].some((r) => r.status === 429 && r.headers.get('retry-after') === '1'),
    'HEAVY_CALLS_BUSY, with Retry-After',
  )
})

t.test("the run's gas is capped at evm.gasCap: a call that needs more is VERIFY_GAS_CAPPED, no node counted", async (t) => {
  const { apiKey } = await tg.createKey('tier-3')
  // 200,000 rounds of 26 gas: 5.2M gas, within anvil's 30M block gas limit, above the 3M cap.
  const tx = { data: countdown(200_000) }
  t.same((await truth([tx, 'latest'])).result, '0x', 'anvil runs it to its end')
  const r = await rpc(tg.url('eth-1'), call([tx, 'latest'], 'cap'), { apiKey })
  t.equal(r.json.error?.code, -32041, `VERIFY_GAS_CAPPED (${JSON.stringify(r.json.error)})`)
  t.match(r.json.error?.message, new RegExp(String(GAS_CAP)), 'naming the gas a run is given')
  t.equal(await failedChecks(tg), 0, 'no node counted')
  // 100,000 rounds: 2.6M gas, within the cap: verified.
  const fits = await rpc(tg.url('eth-1'), call([{ data: countdown(100_000) }, 'latest'], 'fits'), { apiKey })
  t.same(fits.json, { jsonrpc: '2.0', id: 'fits', result: '0x' }, 'a call within the cap is answered')
  t.ok(fits.headers.get('x-tollgate-verified'), 'verified')
})

t.test('an access list over the bound is refused before any proof: no eth_getProof reaches a node', async (t) => {
  const { apiKey } = await tg.createKey('tier-3')
  const before = honest!.received('eth_getProof') + alsoHonest!.received('eth_getProof')
  const accessList = Array.from({ length: 2000 }, (_, i) => ({ address: `0x${(i + 1).toString(16).padStart(40, '0')}`, storageKeys: [] }))
  const r = await rpc(tg.url('eth-1'), call([{ to: busy.token, data: '0x18160ddd', accessList }, 'latest'], 'al'), { apiKey })
  t.equal(r.json.error?.code, -32040, `VERIFY_CALL_TOO_LARGE (${JSON.stringify(r.json.error)})`)
  // The sender (none: the zero address, also anvil's miner), the recipient and the 2,000 entries.
  t.match(r.json.error?.message, /names 2002 accounts and storage keys/, 'counting what it names')
  t.equal(honest!.received('eth_getProof') + alsoHonest!.received('eth_getProof'), before, 'no eth_getProof sent')
  // A node's hint of 2,000 entries: dropped whole, the call still answered.
  honest!.set('eth_createAccessList', { alter: (r) => ({ ...(r as object), accessList }) })
  alsoHonest!.set('eth_createAccessList', { alter: (r) => ({ ...(r as object), accessList }) })
  t.teardown(() => {
    honest!.clear('eth_createAccessList')
    alsoHonest!.clear('eth_createAccessList')
  })
  const hinted = rpc(tg.url('eth-1'), call([{ to: busy.token, data: '0x18160ddd' }, 'latest'], 'hint'), { apiKey })
  const sent = honest!.received('eth_getProof') + alsoHonest!.received('eth_getProof')
  const h = await hinted
  t.same(h.json, { ...(await truth([{ to: busy.token, data: '0x18160ddd' }, 'latest'])), id: 'hint' }, 'answered as anvil answers')
  const proofs = honest!.received('eth_getProof') + alsoHonest!.received('eth_getProof') - sent
  t.ok(proofs <= 3, `no proof of the hint's entries: the sender, the token and its slot (${proofs})`)
})

t.test("an honest node's failures are the client's answer, no node counted, both nodes still in service", async (t) => {
  const { apiKey } = await tg.createKey('tier-3')
  const poor = busy.absent
  const cases: [string, Record<string, unknown>][] = [
    ['an invalid opcode (0xfe)', { data: '0xfe' }],
    ['out of gas', { data: countdown(100_000), gas: '0x186a0' }],
    ['a value above the balance', { from: poor, to: busy.eoa, value: '0xde0b6b3a7640000' }],
    ['gas below the intrinsic cost', { to: busy.token, data: '0x18160ddd', gas: '0x5000' }],
    // A revert with data a node answers: compared with the run, the same.
    ['a revert with data', { data: '0x60006000fd' }],
  ]
  for (const [what, tx] of cases) {
    const honestAnswer = await truth([tx, 'latest'])
    t.ok(honestAnswer.error, `${what}: anvil answers an error (${JSON.stringify(honestAnswer.error)})`)
    const r = await rpc(tg.url('eth-1'), call([tx, 'latest'], 'f'), { apiKey })
    t.same(r.json, { ...honestAnswer, id: 'f' }, `${what}: anvil's own error`)
  }
  t.equal(await failedChecks(tg), 0, 'no check failed')
  for (const node of ['honest', 'also-honest'])
    t.equal(await metric(tg.gateway.admin, 'tollgate_upstream_healthy', { network: 'eth-1', node }), 1, `${node} in service`)
})

t.test('a verified call is charged by the gas it ran', async (t) => {
  const key = await tg.createKey('tier-3')
  // 100,000 rounds of 26 gas and the creation's intrinsic gas: 2,653,xxx gas, two whole millions.
  const r = await rpc(tg.url('eth-1'), call([{ data: countdown(100_000) }, 'latest'], 'u'), { apiKey: key.apiKey })
  t.equal(r.json.result, '0x', 'answered')
  const small = await rpc(tg.url('eth-1'), call([{ to: busy.token, data: '0x18160ddd' }, 'latest'], 's'), { apiKey: key.apiKey })
  t.ok(small.json.result, 'a small call answered')
  // The same in a batch: the loop of 100,000 rounds beside a small call.
  const batch = await rpc(
    tg.url('eth-1'),
    [call([{ data: countdown(100_000) }, 'latest'], 'b1'), call([{ to: busy.token, data: '0x18160ddd' }, 'latest'], 'b2')],
    {
      apiKey: key.apiKey,
    },
  )
  t.same(
    batch.json.map((a: { result?: unknown }) => a.result),
    ['0x', small.json.result],
    'the batch answered',
  )
  // Another key's identical call joining it in flight: the run was the first's, charged once.
  const first = await tg.createKey('tier-3')
  const joiner = await tg.createKey('tier-3')
  const sharedCalls = () => metricNow(tg.gateway.admin, 'tollgate_inflight_shared_total')
  const shared = await sharedCalls()
  // The nodes hold eth_call (within the gateway's 5 s time-out: no failover) while the second
  // call joins the first; nothing is asserted on the time, the join is waited for.
  for (const p of [honest!, alsoHonest!]) p.set('eth_call', { delayMs: 3_000 })
  const asked = honest!.received('eth_call') + alsoHonest!.received('eth_call')
  const tx = { data: countdown(100_001) }
  const a = rpc(tg.url('eth-1'), call([tx, 'latest'], 'j1'), { apiKey: first.apiKey })
  await waitFor(() => honest!.received('eth_call') + alsoHonest!.received('eth_call') > asked, 'the first call at a node')
  const b = rpc(tg.url('eth-1'), call([tx, 'latest'], 'j2'), { apiKey: joiner.apiKey })
  await waitFor(async () => (await sharedCalls()) > shared, 'the second call joining the first')
  for (const p of [honest!, alsoHonest!]) p.clear('eth_call')
  t.same([(await a).json.result, (await b).json.result], ['0x', '0x'], 'both answered')
  await tg.stop()
  const unitsOf = async (keyId: string) => (await usageEventsOf(tg.config, keyId)).reduce((n, e) => n + (e.units ?? 0), 0)
  const units = await unitsOf(key.keyId)
  t.equal(units, 4 * METHODS.eth_call!.cost + 2 * 20, `four calls at their units, and 10 per million gas each loop ran, alone and in a batch (${units})`)
  t.equal(await unitsOf(first.keyId), METHODS.eth_call!.cost + 20, 'the call that ran: its units and its gas')
  t.equal(await unitsOf(joiner.keyId), METHODS.eth_call!.cost, 'the call that joined it: its units only')
})
