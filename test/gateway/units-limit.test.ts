import t from 'tap'
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { connectWs } from '../helpers/ws-client.js'
import { METHODS } from '../../src/rpc/method-table.js'

// A plan may limit compute units per second beside calls per second (issue 30): a burst of traces
// its calls per second would let through is refused with 429, Retry-After and RateLimit-*, while
// the same burst on a plan without a units limit is served.
t.setTimeout(600_000)

// The shipped catalog, with Tier 3 given a units limit of about one trace a second; Tier 2 keeps
// the same calls per second and no units limit.
const UNITS_PER_SECOND = 400
const TRACE = METHODS.debug_traceTransaction!.cost
const dir = mkdtempSync(join(tmpdir(), 'tollgate-units-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const catalog = JSON.parse(readFileSync(new URL('../../schemas/catalogs/default.json', import.meta.url), 'utf8'))
delete catalog.$schema
const tier3 = catalog.plans.find((p: { id: string }) => p.id === 'tier-3')
tier3.limits = { ...tier3.limits, fullUnitsPerSecond: UNITS_PER_SECOND }
// A plan with few calls per second and a units limit on archive nodes only.
catalog.plans.push({ ...tier3, id: 'tight', name: 'Tight', limits: { fullRps: 2, archiveRps: 2, archiveUnitsPerSecond: 1000 } })
const catalogPath = join(dir, 'catalog.json')
writeFileSync(catalogPath, JSON.stringify(catalog))

// Each subtest makes its own keys.
const { anvil, tg } = await anvilGateway(t, {
  catalog: catalogPath,
  // No queue: a call over a limit is refused at once (the queue is tested in test/actors/key-units.test.ts).
  limits: { queueMs: 0 },
  plan: null,
})
const [from] = (await anvil.rpc('eth_accounts')).result
const tx = (await anvil.rpc('eth_sendTransaction', [{ from, to: from, value: '0x1' }])).result as string
const trace = (id: number) => ({ jsonrpc: '2.0', id, method: 'debug_traceTransaction', params: [tx] })
const BURST = 10

t.test('the units per second refuse a burst of traces that the calls per second let through', async (t) => {
  t.ok(BURST < tier3.limits.fullRps, 'the burst is within the calls per second')
  t.ok(BURST * TRACE > UNITS_PER_SECOND * 2, 'and well over the units per second')
  const limited = await tg.createKey('tier-3')
  const answers = await Promise.all(Array.from({ length: BURST }, (_, i) => rpc(tg.url('eth-1'), trace(i), { apiKey: limited.apiKey })))
  const served = answers.filter((a) => a.status === 200 && typeof a.json?.result === 'object')
  const refused = answers.filter((a) => a.status === 429)
  t.equal(served.length + refused.length, BURST, 'each trace served or refused')
  t.ok(served.length >= 1, `the first trace fits (${served.length} served)`)
  t.ok(refused.length >= 1, `the burst is refused in part (${refused.length} of ${BURST})`)
  for (const r of refused) {
    t.equal(r.json.error.code, -32005)
    t.match(
      r.json.error.message,
      new RegExp(`^Rate limit exceeded: this key may spend ${UNITS_PER_SECOND} compute units per second on full nodes, and these calls cost ${TRACE}`),
    )
    t.ok(Number(r.headers.get('retry-after')) >= 1, 'Retry-After')
    t.equal(r.headers.get('ratelimit-limit'), String(UNITS_PER_SECOND), 'RateLimit-Limit is the units per second')
    t.equal(r.headers.get('ratelimit-remaining'), '0')
    t.ok(Number(r.headers.get('ratelimit-reset')) >= 1, 'RateLimit-Reset')
  }
  const read = await rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }, { apiKey: limited.apiKey })
  t.equal(read.status, 200, 'a call of 0 units still goes through')
})

t.test('the same burst on a plan without a units limit is served whole', async (t) => {
  const free = await tg.createKey('tier-2', [{ network: 'eth-1', kind: 'full' }])
  const answers = await Promise.all(Array.from({ length: BURST }, (_, i) => rpc(tg.url('eth-1'), trace(i), { apiKey: free.apiKey })))
  t.same(
    answers.map((a) => a.status),
    Array(BURST).fill(200),
  )
})

t.test('over WebSocket the units count too: each refused call gets -32005 with its own id', async (t) => {
  const limited = await tg.createKey('tier-3')
  const ws = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${limited.apiKey}`)
  t.teardown(() => ws.close())
  const answers = await Promise.all(Array.from({ length: BURST }, (_, i) => ws.call(trace(100 + i))))
  t.same(answers.map((a) => a.id).sort(), Array.from({ length: BURST }, (_, i) => 100 + i).sort(), 'every call answered, with its id')
  const refused = answers.filter((a) => a.error !== undefined)
  t.ok(refused.length >= 1 && refused.length < BURST, `some traces refused (${refused.length} of ${BURST})`)
  for (const r of refused) {
    t.equal(r.error.code, -32005)
    t.match(r.error.message, /compute units per second/)
  }
})

t.test('over WebSocket, a kind without a units limit is not charged: its calls bucket in debt from HTTP does not refuse it', async (t) => {
  const key = await tg.createKey('tight')
  // A batch of 5 over a burst of 2 is admitted on a full bucket and leaves it 3 calls in debt.
  const batch = await rpc(
    tg.url('eth-1'),
    [1, 2, 3, 4, 5].map((id) => ({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] })),
    { apiKey: key.apiKey },
  )
  t.equal(batch.status, 200)
  const ws = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${key.apiKey}`)
  t.teardown(() => ws.close())
  const answer = await ws.call({ jsonrpc: '2.0', id: 7, method: 'eth_blockNumber', params: [] })
  t.equal(typeof answer.result, 'string', 'served: charged as a message only')
})
