import t from 'tap'
import { startAnvils } from '../helpers/anvil-gateway.js'
import { startCountingProxy } from '../helpers/counting-proxy.js'
import { oneNetwork, rpc, startTestGateway } from '../helpers/gateway.js'
import { FakeClock } from '../helpers/fake-clock.js'
import { catalogWith } from '../helpers/plan-catalog.js'
import { metric } from '../helpers/metrics.js'
import { waitFor } from '../helpers/eventually.js'
import { FILTER_POLLED_MS, MAX_FILTER_PINS } from '../../src/gateway/filter-pins.js'

// Filters made on the nodes (eth_newFilter & co.) are shared per key and per account (issue 38,
// item 4), on a real anvil behind a counting proxy. Before, one key's filters had no cap, and the
// pins of every key were one map whose oldest entries went first: a key making filters in a loop
// made every other key's filters "filter not found".
// The clock moves only when told: "idle" and "polled" are the test's own minutes.

const PER_KEY = 4
const PER_ACCOUNT = 6
// A plan whose rate never refuses what the test sends, in one still second of the fake clock.
const catalogPath = catalogWith(t, (tier3) => [{ ...tier3, id: 'wide', name: 'Wide', limits: { fullRps: 10_000_000, archiveRps: 250 } }])

const [anvil] = await startAnvils(t, {})
const proxy = await startCountingProxy(anvil!)
t.teardown(() => proxy.close())
const clock = new FakeClock(Date.now())
const tg = await startTestGateway(t, {
  networks: oneNetwork([{ url: proxy.url, name: 'node' }]),
  catalog: catalogPath,
  clock,
  limits: { maxFiltersPerKey: PER_KEY, maxFiltersPerAccount: PER_ACCOUNT, queueMs: 0 },
})
const url = tg.url('eth-1')
let id = 0
const call = (method: string, params: unknown[] = []) => ({ jsonrpc: '2.0', id: ++id, method, params })
const newFilter = (apiKey: string) => rpc(url, call('eth_newBlockFilter'), { apiKey })
const changes = async (apiKey: string, filter: string) => (await rpc(url, call('eth_getFilterChanges', [filter]), { apiKey })).json
const refused = (limit: string) => metric(tg.gateway.admin, 'tollgate_filters_refused_total', { limit })
const key = () => tg.createKey('wide')

t.test('a key at its cap, every filter polled: the next is refused; another key’s filters answer, made before and after', async (t) => {
  const other = await key()
  const before = (await newFilter(other.apiKey)).json.result
  const a = await key()
  const asked = await Promise.all(Array.from({ length: PER_KEY + 2 }, () => newFilter(a.apiKey)))
  const made = asked.filter((r) => typeof r.json.result === 'string').map((r) => r.json.result as string)
  const no = asked.filter((r) => r.json.error !== undefined)
  t.equal(made.length, PER_KEY, 'four are made, though six were asked for before any was answered')
  t.equal(no.length, 2)
  t.equal(no[0]!.status, 200, 'in a 200 answer, as geth answers errors: waiting would not help')
  t.equal(no[0]!.headers.get('retry-after'), null)
  t.equal(no[0]!.json.error.code, -32036)
  t.equal(
    no[0]!.json.error.message,
    'Too many filters: this key holds 4 live filters on eth-1, at most 4 per key and network (limits.maxFiltersPerKey), every one polled within the last minute (an idle one would have been uninstalled to make room); uninstall filters you no longer poll (eth_uninstallFilter), or use eth_subscribe over WebSocket',
  )
  t.equal(proxy.count('eth_newBlockFilter'), 1 + PER_KEY, 'the refused ones reached no node')
  t.equal(await refused('key'), 2, 'counted on /metrics')

  t.same(await changes(other.apiKey, before), { jsonrpc: '2.0', id, result: [] }, "the other key's filter made before answers")
  const after = (await newFilter(other.apiKey)).json.result
  t.type(after, 'string', 'the other key makes one after')
  t.same((await changes(other.apiKey, after)).result, [], 'and it answers')

  t.equal((await rpc(url, call('eth_uninstallFilter', [made[0]]), { apiKey: a.apiKey })).json.result, true)
  t.type((await newFilter(a.apiKey)).json.result, 'string', 'eth_uninstallFilter makes room for one')
  t.equal((await newFilter(a.apiKey)).json.error?.code, -32036, 'and for one only')
})

t.test("at its cap, a key's idle least recently used filter is uninstalled on its node for the new one; polled ones stay", async (t) => {
  const c = await key()
  const mine: string[] = []
  for (let i = 0; i < PER_KEY; i++) mine.push((await newFilter(c.apiKey)).json.result)
  clock.advance(FILTER_POLLED_MS / 2)
  for (const f of mine.slice(1)) t.same((await changes(c.apiKey, f)).result, [], 'polled')
  clock.advance(FILTER_POLLED_MS / 2)
  const uninstalls = proxy.count('eth_uninstallFilter')
  const fresh = (await newFilter(c.apiKey)).json.result
  t.type(fresh, 'string', 'the new filter is made')
  await waitFor(() => proxy.count('eth_uninstallFilter') === uninstalls + 1, 'the eviction uninstalled on the node')
  t.same((await anvil!.rpc('eth_getFilterChanges', [mine[0]])).error, { code: -32000, message: 'filter not found' }, 'the idle one is gone from the node')
  t.equal((await changes(c.apiKey, mine[0]!)).error?.message, 'filter not found', 'and from the gateway')
  for (const f of [...mine.slice(1), fresh]) t.same((await changes(c.apiKey, f)).result, [], 'the polled ones and the new one answer')
  t.equal(await metric(tg.gateway.admin, 'tollgate_filters_evicted_total'), 1)
  t.equal((await newFilter(c.apiKey)).json.error?.code, -32036, 'polled all: the next is refused, nothing evicted')
})

t.test('a filter the node dropped frees its place once the node says so', async (t) => {
  const d = await key()
  const mine: string[] = []
  for (let i = 0; i < PER_KEY; i++) mine.push((await newFilter(d.apiKey)).json.result)
  t.equal((await newFilter(d.apiKey)).json.error?.code, -32036, 'at its cap')
  // As a node's own idle time-out or a restart would: the filter is gone from the node alone.
  t.equal((await anvil!.rpc('eth_uninstallFilter', [mine[0]])).result, true)
  t.same((await changes(d.apiKey, mine[0]!)).error, { code: -32000, message: 'filter not found' }, "the node's answer, passed on")
  t.type((await newFilter(d.apiKey)).json.result, 'string', 'its place is free again')
})

t.test('eth_uninstallFilter of a filter this key does not hold answers false, as the node and geth do', async (t) => {
  const e = await key()
  const other = await key()
  const unknown = '0x' + 'ab'.repeat(16)
  t.same(await anvil!.rpc('eth_uninstallFilter', [unknown]), { jsonrpc: '2.0', id: 1, result: false }, "the node's own answer")
  const before = proxy.count('eth_uninstallFilter')
  t.same(
    (await rpc(url, { jsonrpc: '2.0', id: 'u', method: 'eth_uninstallFilter', params: [unknown] }, { apiKey: e.apiKey })).json,
    { jsonrpc: '2.0', id: 'u', result: false },
    'never made',
  )
  const made = (await newFilter(other.apiKey)).json.result
  t.same((await rpc(url, call('eth_uninstallFilter', [made]), { apiKey: e.apiKey })).json.result, false, "another key's filter: false, and it stays")
  t.same((await changes(other.apiKey, made)).result, [], "the other key's filter still answers")
  t.equal((await rpc(url, call('eth_uninstallFilter', [made]), { apiKey: other.apiKey })).json.result, true, 'its own key uninstalls it')
  t.equal((await rpc(url, call('eth_uninstallFilter', [made]), { apiKey: other.apiKey })).json.result, false, 'twice: false')
  t.equal(proxy.count('eth_uninstallFilter'), before + 1, 'only the uninstall of a filter the key held reached the node')
})

t.test('the keys of one account share its cap; another account is not touched', async (t) => {
  const old = await key()
  const renewed = await tg.regenerateKey(old.accountId, 3_600_000)
  for (let i = 0; i < PER_KEY; i++) t.type((await newFilter(old.apiKey)).json.result, 'string', 'the old key, in its grace period')
  t.type((await newFilter(renewed.apiKey)).json.result, 'string')
  t.type((await newFilter(renewed.apiKey)).json.result, 'string')
  const past = await newFilter(renewed.apiKey)
  t.equal(past.json.error?.code, -32036, 'the account holds six: the new key gets no seventh')
  t.match(
    past.json.error?.message,
    /^Too many filters: the keys of this account hold 6 live filters on eth-1, at most 6 per account and network \(limits\.maxFiltersPerAccount\)/,
  )
  t.equal(await refused('account'), 1)
  const stranger = await key()
  t.type((await newFilter(stranger.apiKey)).json.result, 'string', 'another account makes one')
})

t.test("polled filters survive another key's churn past the instance's bound", async (t) => {
  const keep = await key()
  const kept = [(await newFilter(keep.apiKey)).json.result, (await newFilter(keep.apiKey)).json.result]
  const churn = await key()
  // More filters than the instance's bound, 100 to a batch (limits.maxBatch): before, the oldest
  // pins, the polled ones above, went first.
  const batch = JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_newBlockFilter', params: [] })))
  let made = 0
  for (let sent = 0; sent <= MAX_FILTER_PINS; sent += 100) {
    const answers = (await rpc(url, batch, { apiKey: churn.apiKey })).json as Array<{ result?: string }>
    made += answers.filter((a) => typeof a.result === 'string').length
    if (sent % 20_000 === 0) for (const f of kept) t.same((await changes(keep.apiKey, f)).result, [], 'polled meanwhile')
  }
  t.ok(made <= PER_KEY, `the churning key made ${made}: at most its share`)
  for (const f of kept) t.same((await changes(keep.apiKey, f)).result, [], 'the polled filters still answer')
})
