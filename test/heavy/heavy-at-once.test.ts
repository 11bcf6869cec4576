import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { oneNetwork, rpc, startTestGateway } from '../helpers/gateway.js'
import { waitFor } from '../helpers/eventually.js'
import { metric } from '../helpers/metrics.js'

// Heavy calls at once, per key (issue 30): a key with its heavy calls all at the node gets 429
// with Retry-After for the next one after a short wait; another key is not held up; a heavy call
// that joins an identical one in flight, or that the cache answers, takes no slot.
t.setTimeout(600_000)
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const proxy = await startFaultProxy(anvil)
t.teardown(() => proxy.close())
// The node takes its time over traces: the calls stay at the node while the test looks.
const TRACE_MS = 4000
proxy.set('debug_*', { delayMs: TRACE_MS })
const AT_ONCE = 2
const WAIT_MS = 100
const tg = await startTestGateway(t, {
  networks: oneNetwork([{ url: proxy.url }]),
  config: { heavy: { atOnce: AT_ONCE, atOnceWaitMs: WAIT_MS }, cache: { finalityPollMs: 100 } },
})
const [from] = (await anvil.rpc('eth_accounts')).result
const url = tg.url('eth-1')
/** A distinct trace each `n` (never shared in flight nor cached: a call at `latest`). */
const trace = (n: number) => ({ jsonrpc: '2.0', id: n, method: 'debug_traceCall', params: [{ from, to: from, value: `0x${n.toString(16)}` }, 'latest'] })
const atNode = () => proxy.received('debug_traceCall')

t.test('past its heavy calls at once, a key waits briefly, then gets 429 with Retry-After; another key does not wait', async (t) => {
  const a = await tg.createKey('tier-3')
  const b = await tg.createKey('tier-3')
  const before = atNode()
  const held = [1, 2].map((n) => rpc(url, trace(n), { apiKey: a.apiKey }))
  await waitFor(() => atNode() === before + AT_ONCE, 'the first two traces at the node')
  t.equal(await metric(tg.gateway.admin, 'tollgate_heavy_calls_running', { plan: 'tier-3' }), AT_ONCE, 'the gauge counts them')
  const [third, fourth] = await Promise.all([3, 4].map((n) => rpc(url, trace(n), { apiKey: a.apiKey })))
  for (const [id, refused] of [
    [3, third!],
    [4, fourth!],
  ] as const) {
    t.equal(refused.status, 429)
    t.equal(refused.headers.get('retry-after'), '1')
    t.equal(refused.json.error.code, -32005)
    t.match(
      refused.json.error.message,
      new RegExp(
        `^Too many heavy calls at once: this key may have ${AT_ONCE} heavy calls .* running at once, and none finished within ${WAIT_MS} ms; retry after 1 s`,
      ),
    )
    t.equal(refused.json.id, id, 'the answer carries the call’s id')
  }
  t.equal(atNode(), before + AT_ONCE, 'the refused traces never reached the node')
  const other = rpc(url, trace(5), { apiKey: b.apiKey })
  await waitFor(() => atNode() === before + AT_ONCE + 1, "another key's trace goes to the node at once")
  for (const answer of await Promise.all([...held, other])) {
    t.equal(answer.status, 200)
    t.equal(typeof answer.json.result, 'object', 'a trace')
  }
  t.equal(await metric(tg.gateway.admin, 'tollgate_heavy_calls_running', { plan: 'tier-3' }), 0, 'none running after')
  const after = await rpc(url, trace(6), { apiKey: a.apiKey })
  t.equal(after.status, 200, 'slots free again once the traces are answered')
})

t.test('a heavy call that joins an identical one in flight, or that the cache answers, takes no slot', async (t) => {
  const a = await tg.createKey('tier-3')
  // eth_getBlockReceipts of block 0 (heavy), cached once block 0 is final.
  const receipts = { jsonrpc: '2.0', id: 1, method: 'eth_getBlockReceipts', params: ['0x0'] }
  await waitFor(async () => (await rpc(url, receipts, { apiKey: a.apiKey })).headers.get('x-tollgate-cache') === 'hit', 'block 0 receipts in the cache')
  const before = atNode()
  const held = [11, 12].map((n) => rpc(url, trace(n), { apiKey: a.apiKey }))
  await waitFor(() => atNode() === before + AT_ONCE, 'two traces at the node')
  const [joined, cached, refused] = await Promise.all([
    rpc(url, trace(11), { apiKey: a.apiKey }),
    rpc(url, receipts, { apiKey: a.apiKey }),
    rpc(url, trace(13), { apiKey: a.apiKey }),
  ])
  t.equal(refused.status, 429, 'a third distinct trace is refused: the slots are taken')
  t.equal(cached.status, 200, 'the cached receipts are served')
  t.equal(cached.headers.get('x-tollgate-cache'), 'hit')
  t.equal(joined.status, 200, 'the identical trace joins the one in flight')
  t.same(joined.json.result, (await held[0]!).json.result, 'with its answer')
  t.equal(atNode(), before + AT_ONCE, 'the node saw only the two traces')
  t.equal((await held[1]!).status, 200)
})
