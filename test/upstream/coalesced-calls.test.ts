import t from 'tap'
import { rawRpc, startAnvil } from '../../harness/anvil.js'
import { startCountingProxy } from '../helpers/counting-proxy.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { freePort } from '../../harness/free-port.js'
import type { UpstreamNodeOptions } from '../../src/upstream/node.js'
import { nodeOn, poolOn, type PoolOptions, type Teardown } from '../helpers/upstream-pool.js'

// Single calls to a node reached over HTTP only, made in one turn of the event loop, go to the
// node as ONE JSON-RPC batch (src/upstream/call-coalescer.ts); each client must still get exactly
// what the node answers that call alone, with its own id. A counting proxy in front of a real
// anvil says how many HTTP requests, of how many calls each, reached the node.

const anvil = await startAnvil()
const proxy = await startCountingProxy(anvil)
t.teardown(async () => {
  await proxy.close()
  await anvil.stop()
})

/** An HTTP-only pool of one node behind the proxy, closed at `t`'s end. */
function poolOf(t: Teardown, coalesce?: UpstreamNodeOptions['coalesce'], extra: Partial<UpstreamNodeOptions> = {}, poolOpts: PoolOptions = {}) {
  const pool = poolOn(t, [{ name: 'http-only', url: proxy.url, coalesce, ...extra }], poolOpts)
  return { node: pool.nodes()[0]!, pool }
}

const address = (i: number) => `0x${(i * 7919).toString(16).padStart(40, '0')}`
// Funded accounts answer a balance other than 0x0: the answers differ call by call.
const funded = ((await anvil.rpc('eth_accounts')).result as string[]).slice(0, 3)
const calls = [
  ...funded.map((a, i) => ({ method: 'eth_getBalance', params: [a, 'latest'], id: `${i + 1}` })),
  { method: 'eth_getBalance', params: [address(5), 'latest'], id: '"five"' },
  { method: 'eth_chainId', params: [], id: 'null' },
  { method: 'eth_getBalance', params: ['not an address'], id: '7' },
]
/** What the node answers each call alone, with the client's id. */
const alone = await Promise.all(
  calls.map(async (c) => {
    const text = await rawRpc(anvil.url, JSON.stringify({ jsonrpc: '2.0', id: 0, method: c.method, params: c.params }))
    return { ...JSON.parse(text), id: JSON.parse(c.id) }
  }),
)

t.test('calls made together go as one batch, and each gets what the node answers it alone', async (t) => {
  const { node, pool } = poolOf(t)
  const before = proxy.requests.length
  const replies = await Promise.all(calls.map((c) => pool.call({ kind: 'full', method: c.method, params: c.params, idJson: c.id, timeoutMs: 5_000 })))
  t.same(proxy.requests.slice(before), [calls.length], 'one HTTP request carried every call')
  t.same(
    replies.map((r) => JSON.parse(r.text)),
    alone,
    "each answer is the node's own, with the client's id",
  )
  t.same(
    replies.map((r) => r.isError),
    [false, false, false, false, false, true],
    "the node's error is flagged on its own call only",
  )
  t.equal(node.counters.httpCalls, calls.length, 'each call counted')
  t.same(node.coalesced, { batches: 1, batchedCalls: calls.length }, 'for /metrics: one batch of them all')
})

t.test('a call alone in its turn goes alone', async (t) => {
  const { pool } = poolOf(t)
  const before = proxy.requests.length
  const first = await pool.call({ kind: 'full', method: 'eth_chainId', params: [], idJson: '1', timeoutMs: 5_000 })
  const second = await pool.call({ kind: 'full', method: 'eth_chainId', params: [], idJson: '2', timeoutMs: 5_000 })
  t.same(proxy.requests.slice(before), [1, 1], 'two single requests')
  t.equal(JSON.parse(first.text).result, '0x7a69')
  t.equal(JSON.parse(second.text).id, 2)
})

t.test('a transaction and heavy calls never wait for a batch', async (t) => {
  const { pool } = poolOf(t)
  const before = proxy.requests.length
  const replies = await Promise.all([
    pool.call({ kind: 'full', method: 'eth_sendRawTransaction', params: ['0x00'], idJson: '1', timeoutMs: 5_000 }),
    pool.call({ kind: 'full', method: 'eth_getLogs', params: [{ fromBlock: '0x0', toBlock: '0x0' }], idJson: '2', timeoutMs: 5_000 }),
    pool.call({ kind: 'full', method: 'eth_getBlockReceipts', params: ['0x0'], idJson: '3', timeoutMs: 5_000 }),
    pool.call({ kind: 'full', method: 'eth_chainId', params: [], idJson: '4', timeoutMs: 5_000 }),
    pool.call({ kind: 'full', method: 'eth_blockNumber', params: [], idJson: '5', timeoutMs: 5_000 }),
  ])
  t.same(proxy.requests.slice(before).sort(), [1, 1, 1, 2], 'the transaction, eth_getLogs and eth_getBlockReceipts alone; the two light calls together')
  t.equal(replies[0].isError, true, "the node's answer to a malformed transaction")
  t.same(JSON.parse(replies[1].text).result, [])
  t.equal(JSON.parse(replies[3].text).result, '0x7a69')
})

t.test('more calls than a batch holds go in batches of at most maxCalls', async (t) => {
  const { pool } = poolOf(t, { maxCalls: 4 })
  const before = proxy.requests.length
  const replies = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      pool.call({ kind: 'full', method: 'eth_getBalance', params: [address(i), 'latest'], idJson: `${i}`, timeoutMs: 5_000 }),
    ),
  )
  t.same(proxy.requests.slice(before), [4, 4, 2])
  t.same(
    replies.map((r) => JSON.parse(r.text).id),
    Array.from({ length: 10 }, (_, i) => i),
  )
})

t.test('coalesce: false sends every call alone', async (t) => {
  const { pool } = poolOf(t, false)
  const before = proxy.requests.length
  await Promise.all(
    [1, 2, 3].map((i) => pool.call({ kind: 'full', method: 'eth_getBalance', params: [address(i), 'latest'], idJson: `${i}`, timeoutMs: 5_000 })),
  )
  t.same(proxy.requests.slice(before), [1, 1, 1])
})

t.test('a node that refuses batches gets each call alone, and single calls for a while', async (t) => {
  let now = 1_000_000
  const { pool } = poolOf(t, { refusedForMs: 60_000, now: () => now })
  t.teardown(() => {
    proxy.refuseBatches = false
  })
  proxy.refuseBatches = true
  const ask = () => Promise.all(calls.map((c) => pool.call({ kind: 'full', method: c.method, params: c.params, idJson: c.id, timeoutMs: 5_000 })))
  let before = proxy.requests.length
  const replies = await ask()
  t.same(
    replies.map((r) => JSON.parse(r.text)),
    alone,
    'every call answered as the node answers it alone',
  )
  t.same(proxy.requests.slice(before), [calls.length, ...calls.map(() => 1)], 'the refused batch, then each call alone')
  before = proxy.requests.length
  now += 59_000
  await ask()
  t.same(
    proxy.requests.slice(before),
    calls.map(() => 1),
    'within the minute: single calls, no batch tried',
  )
  proxy.refuseBatches = false
  before = proxy.requests.length
  now += 2_000
  t.same(
    (await ask()).map((r) => JSON.parse(r.text)),
    alone,
  )
  t.same(proxy.requests.slice(before), [calls.length], 'after it: a batch again')
})

t.test('a batch whose answer is over the size limit is sent again call by call', async (t) => {
  // Each balance answer is ~60 bytes: six of them are over 200, one is not.
  const { pool } = poolOf(t, undefined, { maxAnswerBytes: 200 })
  const before = proxy.requests.length
  const replies = await Promise.all(
    calls.slice(0, 6).map((c) => pool.call({ kind: 'full', method: c.method, params: c.params, idJson: c.id, timeoutMs: 5_000 })),
  )
  t.same(
    replies.map((r) => JSON.parse(r.text)),
    alone.slice(0, 6),
  )
  t.same(proxy.requests.slice(before), [6, 1, 1, 1, 1, 1, 1])
})

t.test('when the batch fails on one node, each of its calls fails over to another', async (t) => {
  const refused = nodeOn(t, `http://127.0.0.1:${await freePort()}`, { name: 'refused' })
  const pool = poolOn(t, [refused, { name: 'good', url: proxy.url }])
  const replies = await Promise.all(calls.map((c) => pool.call({ kind: 'full', method: c.method, params: c.params, idJson: c.id, timeoutMs: 5_000 })))
  t.same(
    replies.map((r) => JSON.parse(r.text)),
    alone,
  )
  t.same(
    replies.map((r) => r.node),
    calls.map(() => 'good'),
  )
  // Round-robin sends half the calls to each node first: those on the refused one failed together.
  t.ok(refused.counters.calls >= 2, `several calls went to the refused node first (${refused.counters.calls})`)
  t.equal(refused.counters.failures, refused.counters.calls, 'each of them counted its failure there')
})

t.test('a call with less time than its batch times out on its own', async (t) => {
  // A hung node: the batch of the two is never answered.
  await anvil.freeze()
  t.teardown(() => anvil.thaw())
  const { pool } = poolOf(t)
  const order: string[] = []
  const failure = (label: string) => (err: unknown) => {
    order.push(label)
    return err
  }
  const [short, long] = await Promise.all([
    pool.call({ kind: 'full', method: 'eth_chainId', params: [], idJson: '1', timeoutMs: 300, deadlineMs: 300 }).catch(failure('short')),
    pool.call({ kind: 'full', method: 'eth_blockNumber', params: [], idJson: '2', timeoutMs: 1_500, deadlineMs: 1_500 }).catch(failure('long')),
  ])
  t.same(order, ['short', 'long'], 'the short call did not wait for the batch')
  // Each attempt is given what is left of its call's deadline when it is sent: the time asked
  // for, or a millisecond or so less when the clock moved on meanwhile (1,499 seen in a full run).
  t.match(short, { name: 'UpstreamTimeout' })
  t.match(long, { name: 'UpstreamTimeout' })
  const given = (e: unknown) => (e as { timeoutMs: number }).timeoutMs
  t.ok(given(short) > 250 && given(short) <= 300, `the short call had its own 300 ms (${given(short)})`)
  t.ok(given(long) > 1_000 && given(long) <= 1_500, `the long call had its own 1,500 ms (${given(long)})`)
})

t.test('a call whose params cannot be written fails alone, in a batch or not', async (t) => {
  const { pool } = poolOf(t)
  // A BigInt has no JSON: only a caller inside the gateway could pass one, never a client.
  const [bad, good] = await Promise.allSettled([
    pool.call({ kind: 'full', method: 'eth_getBalance', params: [10n, 'latest'], idJson: '1', timeoutMs: 5_000 }),
    pool.call({ kind: 'full', method: 'eth_chainId', params: [], idJson: '2', timeoutMs: 5_000 }),
  ])
  t.match(bad, { status: 'rejected', reason: { name: 'TypeError' } })
  t.match(good, { status: 'fulfilled', value: { text: '{"jsonrpc":"2.0","id":2,"result":"0x7a69"}' } })
  const alone = await pool.call({ kind: 'full', method: 'eth_getBalance', params: [10n, 'latest'], idJson: '3', timeoutMs: 5_000 }).catch((err: Error) => err)
  t.match(alone, { name: 'TypeError' }, 'alone in its turn: a rejection, not an uncaught exception')
})

t.test('a call sent again alone after its batch gets only the time it has left', async (t) => {
  // A fake clock that moves 3 s each time it is read: the batch is sent at one reading, and its
  // refused answer is read two readings later, 6 s after: past the calls' 5 s.
  let now = 0
  // The pool's own deadline on a clock that stands still, so that each call reaches the node with
  // exactly its 5 s: on the system clock a millisecond passing under load made it 4,999 (seen once).
  const { pool } = poolOf(t, { now: () => (now += 3_000) }, {}, { clock: { now: () => 0 } })
  t.teardown(() => {
    proxy.refuseBatches = false
  })
  proxy.refuseBatches = true
  const before = proxy.requests.length
  const results = await Promise.allSettled([
    pool.call({ kind: 'full', method: 'eth_chainId', params: [], idJson: '1', timeoutMs: 5_000, deadlineMs: 5_000 }),
    pool.call({ kind: 'full', method: 'eth_blockNumber', params: [], idJson: '2', timeoutMs: 5_000, deadlineMs: 5_000 }),
  ])
  t.match(results, [
    { status: 'rejected', reason: { name: 'UpstreamTimeout', timeoutMs: 5_000 } },
    { status: 'rejected', reason: { name: 'UpstreamTimeout', timeoutMs: 5_000 } },
  ])
  t.same(proxy.requests.slice(before), [2], 'the refused batch only: no call sent again without time left')
})

t.test("the gateway's own polls go alone: a node that holds one holds no client's call with it", async (t) => {
  // A node that never answers a block read in time (as the finality tracker's `finalized` poll
  // met in a CI run: a balance batched with it waited for the whole time-out, 2 answers of 3).
  const holding = await startFaultProxy(anvil)
  holding.set('eth_getBlockByNumber', { delayMs: 600_000 })
  t.teardown(() => holding.close())
  const node = nodeOn(t, holding.url, { name: 'holds-blocks' })
  const pool = poolOn(t, [node])
  // In one turn of the event loop: the poll, then a client's balance.
  const poll = node.call({ method: 'eth_getBlockByNumber', params: ['finalized', false], alone: true }, 60_000).catch((err: Error) => err)
  const balance = await pool.call({ kind: 'full', method: 'eth_getBalance', params: [funded[0], 'latest'], idJson: '1', timeoutMs: 30_000 })
  t.match(balance.text, /^\{"jsonrpc":"2.0","id":1,"result":"0x[0-9a-f]+"\}$/, 'the balance is answered')
  t.equal(holding.received('eth_getBlockByNumber'), 1, 'the poll reached the node')
  t.equal(holding.forwarded('eth_getBlockByNumber'), 0, 'and is still held there')
  t.equal(holding.received('eth_getBalance'), 1, 'the balance went in a request of its own')
  void poll
})
