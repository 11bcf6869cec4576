import t from 'tap'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deployLogEmitter, emitLogs } from '../../harness/log-emitter.js'
import { METHODS } from '../../src/rpc/method-table.js'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { waitFor } from '../helpers/eventually.js'
import { FakeClock } from '../helpers/fake-clock.js'
import { rpc } from '../helpers/gateway.js'
import { metric } from '../helpers/metrics.js'
import { connectWs } from '../helpers/ws-client.js'

// Where a plan limits compute units per second, notifications spend them as calls do: a key whose
// copies would go past its plan's units is cut off with 1008 naming the plan's limit, and its calls
// then find the units spent (429), while an account on a plan without a units limit keeps
// receiving. The key actors run on a clock that stands still, so the units do not refill meanwhile.
const UNITS_PER_SECOND = 500
const dir = mkdtempSync(join(tmpdir(), 'tollgate-notification-units-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const catalog = JSON.parse(readFileSync(new URL('../../schemas/catalogs/default.json', import.meta.url), 'utf8'))
delete catalog.$schema
const tier3 = catalog.plans.find((p: { id: string }) => p.id === 'tier-3')
tier3.limits = { ...tier3.limits, fullUnitsPerSecond: UNITS_PER_SECOND }
const catalogPath = join(dir, 'catalog.json')
writeFileSync(catalogPath, JSON.stringify(catalog))

const clock = new FakeClock()
const { tg, anvil } = await anvilGateway(t, { clock, catalog: catalogPath, limits: { queueMs: 0 }, plan: null })
const emitter = await deployLogEmitter(anvil)
const limited = await tg.createKey('tier-3')
const unlimited = await tg.createKey('tier-2', [{ network: 'eth-1', kind: 'full' }])
const filter = ['logs', { address: emitter.address }]

t.test('copies past the plan’s units per second close the connection; another plan keeps receiving', async (t) => {
  const a = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${limited.apiKey}`)
  const b = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${unlimited.apiKey}`)
  t.teardown(() => b.close())
  const copies: string[] = []
  for (let i = 0; i < 20; i++) copies.push((await a.call({ jsonrpc: '2.0', id: i, method: 'eth_subscribe', params: filter })).result)
  const one: string = (await b.call({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: filter })).result
  // 5 logs × 20 copies, about 25 units each: some 2,500 units against the plan's 500.
  await emitLogs(anvil, emitter, { blocks: 1, perBlock: 5, gap: 0 })
  let closed: { code: number; reason: string } | undefined
  a.closed.then((c) => (closed = c))
  // The bound only stops a gateway that never closes it (as before notifications spent a plan's units).
  await waitFor(() => closed !== undefined, 'the limited key’s connection closed')
  if (closed === undefined) return
  t.equal(closed.code, 1008)
  t.match(closed.reason, new RegExp(`^Notification budget: the plan's ${UNITS_PER_SECOND} units/s on full nodes are spent; subscribe once per filter`))
  const delivered = copies.flatMap((id) => a.notificationTexts(id))
  const units = delivered.reduce((s, text) => s + Math.ceil(text.length / 25), 0)
  t.ok(delivered.length > 0 && units <= UNITS_PER_SECOND, `${delivered.length} of 100 copies delivered (${units} units) before the plan's units were spent`)
  await waitFor(() => b.notifications(one).length === 5, 'the other plan’s five logs')
  t.equal(await metric(tg.gateway.admin, 'tollgate_ws_closed_total', { cause: 'notification-budget' }), 1, 'counted by cause')

  // The units the notifications spent are the plan's: a call that costs units finds them spent.
  const cost = METHODS.eth_getLogs!.cost
  const left = UNITS_PER_SECOND - copies.length * METHODS.eth_subscribe!.cost - units
  t.ok(left < cost, `what the subscribes and the notifications left (${left}) is less than one eth_getLogs (${cost})`)
  const call = { jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [{ address: emitter.address, fromBlock: 'latest', toBlock: 'latest' }] }
  const refused = await rpc(tg.url('eth-1'), call, { apiKey: limited.apiKey })
  t.equal(refused.status, 429, 'the same key’s call is refused by its units per second')
  t.match(refused.json.error.message, /compute units per second on full nodes/)
  const served = await rpc(tg.url('eth-1'), call, { apiKey: unlimited.apiKey })
  t.equal(served.status, 200, 'the other plan’s call is served')
  clock.advance(1_000)
  const later = await rpc(tg.url('eth-1'), call, { apiKey: limited.apiKey })
  t.equal(later.status, 200, 'a second later the units are back')
})
