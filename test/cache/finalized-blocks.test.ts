import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startAnvil } from '../../harness/anvil.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metricNow } from '../helpers/metrics.js'

// Finalized blocks come from the LMDB cache with no upstream call; a block above the finalized
// one never does. anvil's `finalized` tag is head − 64.
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const [from, to] = (await anvil.rpc('eth_accounts')).result as string[]
const txHash = (await anvil.rpc('eth_sendTransaction', [{ from, to, value: '0x1' }])).result as string
await anvil.rpc('anvil_mine', ['0xc8'])
const finalized = parseInt((await anvil.rpc('eth_getBlockByNumber', ['finalized', false])).result.number, 16)

const cacheDir = await mkdtemp(join(tmpdir(), 'tollgate-cache-'))
t.teardown(() => rm(cacheDir, { recursive: true, force: true }))
const networks = { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full' as const }] } }
const tg = await startTestGateway(t, { networks, quiet: true, config: { cache: { path: cacheDir } } }) // every upstream call the node counts is a client's
const { apiKey } = await tg.createKey('tier-3')
/** The calls that reached a gateway's one node, as its /metrics says them. */
const nodeCalls = (gw = tg) => metricNow(gw.gateway.admin, 'tollgate_upstream_calls_total', { network: 'eth-1' })
const call = (method: string, params: unknown[], id: unknown = 1, url = tg.url('eth-1'), key = apiKey) =>
  rpc(url, { jsonrpc: '2.0', id, method, params }, { apiKey: key })
const hex = (n: number) => `0x${n.toString(16)}`

t.test('the gateway knows the finalized block', async (t) => {
  t.equal(tg.gateway.finality?.finalized('eth-1'), finalized)
  t.equal(tg.gateway.finality?.mode('eth-1'), 'tag')
})

t.test('a finalized block is served from the cache without an upstream call', async (t) => {
  const block = hex(finalized - 10)
  const first = await call('eth_getBlockByNumber', [block, true], 'a')
  t.equal(first.headers.get('x-tollgate-cache'), 'miss')
  await tg.gateway.cache!.flushed()
  const before = await nodeCalls()
  const second = await call('eth_getBlockByNumber', [block, true], 'b')
  t.equal(second.headers.get('x-tollgate-cache'), 'hit')
  t.equal(await nodeCalls(), before, 'no upstream call')
  t.equal(second.json.id, 'b', "the client's own id")
  t.same(second.json.result, (await anvil.rpc('eth_getBlockByNumber', [block, true])).result, 'what the node answers')
})

t.test('a block above the finalized one is never served from the cache', async (t) => {
  const block = hex(finalized + 5)
  for (const id of [1, 2, 3]) {
    const before = await nodeCalls()
    const res = await call('eth_getBlockByNumber', [block, false], id)
    t.equal(res.headers.get('x-tollgate-cache'), 'miss')
    t.equal(await nodeCalls(), before + 1, 'asked upstream every time')
    await tg.gateway.cache!.flushed()
  }
})

t.test('a transaction and its receipt in a finalized block, and the chain id, are cached', async (t) => {
  for (const [method, params] of [
    ['eth_getTransactionByHash', [txHash]],
    ['eth_getTransactionReceipt', [txHash]],
    ['eth_chainId', []],
    ['eth_getBalance', [to, hex(finalized)]],
  ] as const) {
    await call(method, [...params])
    await tg.gateway.cache!.flushed()
    const before = await nodeCalls()
    const res = await call(method, [...params], 9)
    t.equal(res.headers.get('x-tollgate-cache'), 'hit', method)
    t.equal(await nodeCalls(), before, `${method}: no upstream call`)
    t.same(res.json.result, (await anvil.rpc(method, [...params])).result)
  }
})

t.test('unknown answers (null) and state at a moving tag are not cached', async (t) => {
  const unknown = '0x' + '00'.repeat(31) + '01'
  await call('eth_getTransactionByHash', [unknown])
  await tg.gateway.cache!.flushed()
  const res = await call('eth_getTransactionByHash', [unknown])
  t.equal(res.headers.get('x-tollgate-cache'), 'miss')
  t.equal(res.json.result, null)
  const latest = await call('eth_getBalance', [to, 'latest'])
  t.equal(latest.headers.get('x-tollgate-cache'), null, 'no cache header for what is never cacheable')
})

t.test('another gateway on the same cache folder hits what the first stored', async (t) => {
  const other = await startTestGateway(t, { networks, quiet: true, config: { cache: { path: cacheDir } } })
  const otherKey = (await other.createKey('tier-3')).apiKey
  const before = await nodeCalls(other)
  const res = await call('eth_getBlockByNumber', [hex(finalized - 10), true], 7, other.url('eth-1'), otherKey)
  t.equal(res.headers.get('x-tollgate-cache'), 'hit')
  t.equal(await nodeCalls(other), before)
  const metrics = await (await fetch(`${other.gateway.admin}/metrics`)).text()
  t.match(metrics, /tollgate_cache_hits_total 1\b/)
  t.match(metrics, /tollgate_cache_entries [1-9]/)
})

t.test('in a batch, cached calls are answered from the cache with their ids, the others upstream, in order', async (t) => {
  const cachedBlock = hex(finalized - 20)
  await call('eth_getBlockByNumber', [cachedBlock, false], 'warm')
  await tg.gateway.cache!.flushed()
  const before = await nodeCalls()
  const batch = [
    { jsonrpc: '2.0', id: 'c1', method: 'eth_getBlockByNumber', params: [cachedBlock, false] },
    { jsonrpc: '2.0', id: 'u1', method: 'eth_blockNumber', params: [] },
    { jsonrpc: '2.0', id: 'BIG', method: 'eth_getBlockByNumber', params: [cachedBlock, false] },
    { jsonrpc: '2.0', id: 'u2', method: 'eth_gasPrice', params: [] },
  ]
  // Sent as text: a number above 2^53 must reach the gateway as written.
  const res = await rpc(tg.url('eth-1'), JSON.stringify(batch).replace('"BIG"', '12345678901234567890'), { apiKey })
  t.same(
    res.json.map((a: { id: unknown }) => a.id),
    // The large id read back as any client's JSON.parse reads it; the text is checked below.
    ['c1', 'u1', JSON.parse('12345678901234567890'), 'u2'],
    'the answers in request order, each with its own id',
  )
  t.match(res.text, /"id":12345678901234567890,/, 'a large numeric id comes back as sent, from the cache too')
  const expected = (await anvil.rpc('eth_getBlockByNumber', [cachedBlock, false])).result
  t.same(res.json[0].result, expected)
  t.same(res.json[2].result, expected)
  const upstream = (await nodeCalls()) - before
  t.ok(upstream <= 2, `the two uncached calls went upstream (${upstream} upstream calls), the cached ones did not`)
})
