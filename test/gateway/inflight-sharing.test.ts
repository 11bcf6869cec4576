import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { until } from '../helpers/eventually.js'
import { metricNow } from '../helpers/metrics.js'

// Ten identical calls in flight at once cost the node one call; each client gets its own id.
// A node frozen by a failed test is let go at teardown: stop() sends SIGCONT after SIGTERM.
const {
  anvil,
  tg,
  key: { apiKey },
} = await anvilGateway(t, { nodeWs: false, quiet: true })
// What reached the node and what was shared, as /metrics says them; how many distinct calls are in
// flight, which no public interface says, through the one test seam of the calls in flight.
const nodeCalls = () => metricNow(tg.gateway.admin, 'tollgate_upstream_calls_total', { network: 'eth-1' })
const sharedCalls = () => metricNow(tg.gateway.admin, 'tollgate_inflight_shared_total')
const inflight = tg.gateway.caller.inflight

t.test('ten identical concurrent calls make one upstream call', async (t) => {
  const before = await nodeCalls()
  const shared = await sharedCalls()
  // Frozen, the node holds the first call, so that all ten are surely in flight together.
  await anvil.freeze()
  const ids = Array.from({ length: 10 }, (_, i) => `client-${i}`)
  const answers = Promise.all(
    ids.map((id) => rpc(tg.url('eth-1'), { jsonrpc: '2.0', id, method: 'eth_getBlockByNumber', params: ['latest', false] }, { apiKey })),
  )
  t.ok(await until(async () => (await sharedCalls()) - shared === 9), 'nine calls wait on the first')
  anvil.thaw()
  const replies = await answers
  t.equal((await nodeCalls()) - before, 1, 'one upstream call')
  t.same(
    replies.map((r) => r.json.id),
    ids,
    'each client its own id',
  )
  t.equal(new Set(replies.map((r) => r.json.result.hash)).size, 1, 'one answer for all')
})

t.test('different params are different calls', async (t) => {
  const before = await nodeCalls()
  await anvil.freeze()
  const answers = Promise.all(
    ['0x0', '0x0', 'latest'].map((n, i) =>
      rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [`0x${'1'.repeat(40)}`, n] }, { apiKey }),
    ),
  )
  t.ok(await until(() => inflight.size === 2), 'two distinct calls in flight')
  anvil.thaw()
  const replies = await answers
  t.equal((await nodeCalls()) - before, 2)
  t.ok(replies.every((r) => r.json.result === '0x0'))
})

t.test('calls inside batches are shared in flight with other requests, and answered with their own ids', async (t) => {
  const before = await nodeCalls()
  const shared = await sharedCalls()
  await anvil.freeze()
  // A single call first, then three batches that each hold the same call twice and one call of their own.
  const single = rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: 'single', method: 'eth_getBlockByNumber', params: ['latest', false] }, { apiKey })
  t.ok(await until(() => inflight.size === 1), 'the single call is in flight')
  const batches = Promise.all(
    [0, 1, 2].map((b) =>
      rpc(
        tg.url('eth-1'),
        [
          { jsonrpc: '2.0', id: `${b}-a`, method: 'eth_getBlockByNumber', params: ['latest', false] },
          { jsonrpc: '2.0', id: `${b}-b`, method: 'eth_getBalance', params: [`0x${String(b + 1).repeat(40)}`, 'latest'] },
          { jsonrpc: '2.0', id: `${b}-c`, method: 'eth_getBlockByNumber', params: ['latest', false] },
        ],
        { apiKey },
      ),
    ),
  )
  // Each batch's first copy joins the single call; its second copy is its own first's copy.
  t.ok(
    await until(async () => (await sharedCalls()) - shared === 3 && inflight.size === 4),
    'the batches joined the single call; their own calls are in flight',
  )
  anvil.thaw()
  const [first, replies] = await Promise.all([single, batches])
  t.equal(first.json.id, 'single')
  t.equal((await nodeCalls()) - before, 4, 'one upstream call for the seven identical calls, one for each balance')
  for (const [b, reply] of replies.entries()) {
    const answers = reply.json as Array<{ id: string; result: unknown }>
    t.same(
      answers.map((a) => a.id),
      [`${b}-a`, `${b}-b`, `${b}-c`],
      `batch ${b}: every call answered with its own id, in order`,
    )
    t.equal((answers[0].result as { hash: string }).hash, first.json.result.hash, `batch ${b}: the shared answer`)
    t.equal(answers[1].result, '0x0')
  }
})

t.test('a single call joins the identical call of another request upstream batch', async (t) => {
  const before = await nodeCalls()
  const shared = await sharedCalls()
  await anvil.freeze()
  const [x, y] = [`0x${'8'.repeat(40)}`, `0x${'9'.repeat(40)}`]
  const batch = rpc(
    tg.url('eth-1'),
    [
      { jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [x, 'latest'] },
      { jsonrpc: '2.0', id: 2, method: 'eth_getBalance', params: [y, 'latest'] },
    ],
    { apiKey },
  )
  t.ok(await until(() => inflight.size === 2), 'both calls of the upstream batch are in flight')
  const single = rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: 'alone', method: 'eth_getBalance', params: [y, 'latest'] }, { apiKey })
  t.ok(await until(async () => (await sharedCalls()) - shared === 1), 'the single call waits on the batch')
  anvil.thaw()
  const [b, s] = await Promise.all([batch, single])
  t.same(
    (b.json as Array<{ id: number }>).map((a) => a.id),
    [1, 2],
  )
  t.same(s.json, { jsonrpc: '2.0', id: 'alone', result: '0x0' }, 'its own id, the node answer')
  t.equal((await nodeCalls()) - before, 2, 'the two calls of the upstream batch, nothing more')
})
