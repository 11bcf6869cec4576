import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startCountingProxy } from '../helpers/counting-proxy.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { oneNetwork, rpc, startTestGateway } from '../helpers/gateway.js'
import { waitFor } from '../helpers/eventually.js'

// Issue 38, item 5: a method outside the method table that the network forwards (forwardMethods)
// is a heavy call: it takes one of its key's heavy.atOnce slots, shared with the listed heavy
// methods, and has the heavy time-out. On main 40 concurrent unlisted traces of one key were all
// at the node at once (16 in the run, where listed heavy methods stopped at 8), and an
// unlisted call had the ordinary time-out.
t.setTimeout(300_000)
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
// gateway → counting proxy (holds calls, counts them at the node) → fault proxy (a slow node) → anvil
const slow = await startFaultProxy(anvil)
t.teardown(() => slow.close())
const proxy = await startCountingProxy(slow)
t.teardown(() => proxy.close())
const AT_ONCE = 4
const WAIT_MS = 100
const UPSTREAM_TIMEOUT_MS = 500
const networks = oneNetwork([{ url: proxy.url }])
networks['eth-1'].forwardMethods = ['ots_*']
const tg = await startTestGateway(t, {
  networks,
  limits: { upstreamTimeoutMs: UPSTREAM_TIMEOUT_MS },
  config: { heavy: { atOnce: AT_ONCE, atOnceWaitMs: WAIT_MS, timeoutMs: 60_000 } },
})
const url = tg.url('eth-1')
const [from] = (await anvil.rpc('eth_accounts')).result
// anvil serves Otterscan's ots_ methods; the table lists none of them.
const unlisted = (id: number) => ({ jsonrpc: '2.0', id, method: 'ots_getApiLevel', params: [] })
const trace = (n: number) => ({ jsonrpc: '2.0', id: n, method: 'debug_traceCall', params: [{ from, to: from, value: `0x${n.toString(16)}` }, 'latest'] })

t.test('40 forwarded calls of one key at once: heavy.atOnce at the node, the rest 429', async (t) => {
  const { apiKey } = await tg.createKey('tier-3')
  const before = proxy.count('ots_getApiLevel')
  const held = proxy.hold((c) => c.method === 'ots_getApiLevel')
  let settled = 0
  const answers = Array.from({ length: 40 }, (_, i) =>
    rpc(url, unlisted(i), { apiKey }).finally(() => {
      settled++
    }),
  )
  await waitFor(() => settled === 40 - AT_ONCE, 'every call past the bound answered while the first ones are held')
  t.equal(held.count, AT_ONCE, `${AT_ONCE} calls at the node at once`)
  held.release()
  const all = await Promise.all(answers)
  t.equal(all.filter((a) => a.status === 429 && a.json.error?.code === -32005).length, 40 - AT_ONCE, 'the rest refused as heavy calls are')
  t.equal(all.filter((a) => a.status === 200 && a.json.result !== undefined).length, AT_ONCE, 'the held ones answered by the node')
  t.equal(proxy.count('ots_getApiLevel') - before, AT_ONCE, 'no more reached the node')
})

t.test('listed and forwarded heavy calls share one bound', async (t) => {
  const { apiKey } = await tg.createKey('tier-3')
  const held = proxy.hold((c) => c.method === 'debug_traceCall')
  const traces = Array.from({ length: AT_ONCE }, (_, i) => rpc(url, trace(100 + i), { apiKey }))
  await waitFor(() => held.count === AT_ONCE, 'the traces at the node')
  const refused = await rpc(url, unlisted(1), { apiKey })
  t.equal(refused.status, 429, 'a forwarded call finds no slot left by the listed traces')
  t.match(refused.json.error?.message, /heavy calls .*methods forwarded outside the method table/)
  held.release()
  for (const answer of await Promise.all(traces)) t.equal(answer.status, 200)
  t.equal((await rpc(url, unlisted(2), { apiKey })).status, 200, 'a slot free again: forwarded')
})

t.test('a forwarded call has the heavy time-out, not the ordinary one', async (t) => {
  const { apiKey } = await tg.createKey('tier-3')
  // The node takes twice the ordinary time-out over it: within heavy.timeoutMs.
  slow.set('ots_getApiLevel', { delayMs: UPSTREAM_TIMEOUT_MS * 2 })
  t.teardown(() => slow.clear())
  const r = await rpc(url, unlisted(3), { apiKey })
  t.equal(r.status, 200)
  t.same(r.json, { ...(await anvil.rpc('ots_getApiLevel')), id: 3 }, "the node's answer")
})
