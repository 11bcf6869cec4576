import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { METHODS } from '../../src/rpc/method-table.js'
import { startCountingProxy } from '../helpers/counting-proxy.js'
import { waitFor } from '../helpers/eventually.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metric } from '../helpers/metrics.js'

// What an eth_getLogs costs follows the node calls it causes: split into chunks, it is charged its
// method's units per chunk (docs/costs.md), counted against the node calls a counting proxy saw.
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
await anvil.rpc('anvil_mine', ['0x834']) // 2,100 blocks
const head = parseInt((await anvil.rpc('eth_blockNumber')).result, 16)
const proxy = await startCountingProxy(anvil)
t.teardown(() => proxy.close())

const tg = await startTestGateway(t, {
  networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: proxy.url, kind: 'full' as const }] } },
  // Chunks of 40 blocks: a call over 2,000 blocks is 50 chunks, as 100,000 blocks are at the defaults;
  // at most 2,050 blocks, so that the whole chain (2,101 blocks) is too wide: a range whose top is
  // past the head is measured to the head.
  config: { heavy: { getLogs: { chunkBlocks: 40, maxRangeBlocks: 2050 } } },
})
const { apiKey } = await tg.createKey('tier-3')
const url = tg.url('eth-1')
const LOGS = METHODS.eth_getLogs.cost
const hex = (n: number) => `0x${n.toString(16)}`
// Each subtest asks for ranges whose chunks no other asked: a chunk answered before may come from
// the cache (still charged, as the units are what the client asked for), and the proxy would not see it.

// Routing reads the network's head for `latest`: wait until the gateway has seen the mined one.
await waitFor(async () => (await metric(tg.gateway.admin, 'tollgate_upstream_head_block')) === head, 'the gateway to see the head')

/** Units served and node eth_getLogs calls caused by `send`. */
async function measure(send: () => Promise<unknown>): Promise<{ units: number; nodeCalls: number }> {
  const units0 = (await metric(tg.gateway.admin, 'tollgate_units_served_total')) ?? 0
  const calls0 = proxy.count('eth_getLogs')
  await send()
  const units = ((await metric(tg.gateway.admin, 'tollgate_units_served_total')) ?? 0) - units0
  return { units, nodeCalls: proxy.count('eth_getLogs') - calls0 }
}
const getLogs = (filter: object, id: number | string = 1) => ({ jsonrpc: '2.0', id, method: 'eth_getLogs', params: [filter] })

t.test('a range within one chunk costs one call’s units', async (t) => {
  const m = await measure(async () => t.same((await rpc(url, getLogs({ fromBlock: '0x5', toBlock: '0x2c' }), { apiKey })).json.result, []))
  t.same(m, { units: LOGS, nodeCalls: 1 })
})

t.test('a range over 2,000 blocks costs its 50 chunks, each a node call', async (t) => {
  const m = await measure(async () => t.same((await rpc(url, getLogs({ fromBlock: '0x1', toBlock: hex(2000) }), { apiKey })).json.result, []))
  t.equal(m.nodeCalls, 50, 'the node was asked 50 times')
  t.equal(m.units, 50 * LOGS, 'and the call was charged 50 chunks')
})

t.test('a range up to latest is measured against the head', async (t) => {
  const from = head - 399 // 400 blocks: 10 chunks
  const m = await measure(async () => t.same((await rpc(url, getLogs({ fromBlock: hex(from), toBlock: 'latest' }), { apiKey })).json.result, []))
  t.equal(m.nodeCalls, 10)
  t.equal(m.units, 10 * LOGS)
})

t.test('a range whose top is past the head is measured to the head: charged and asked as its blocks up to the head', async (t) => {
  // 1,211 blocks up to the head (31 chunks), none of them a chunk another subtest asks.
  const from = head - 1210
  const filter = { fromBlock: hex(from), toBlock: '0xffffff' }
  const expected = (await anvil.rpc('eth_getLogs', [filter])).result
  const m = await measure(async () => t.same((await rpc(url, getLogs(filter), { apiKey })).json.result, expected, 'what the node answers'))
  t.equal(m.nodeCalls, 31, 'the node was asked 31 chunks, none past the head')
  t.equal(m.units, 31 * LOGS, 'and the call was charged 31 chunks, not refused as 16,775,000 blocks')
})

t.test('each call of a batch is charged its own chunks', async (t) => {
  const batch = [
    getLogs({ fromBlock: '0x3', toBlock: hex(402) }, 1),
    getLogs({ fromBlock: '0x7', toBlock: '0x7' }, 2),
    getLogs({ blockHash: `0x${'00'.repeat(32)}` }, 3),
  ]
  const m = await measure(async () => t.equal((await rpc(url, batch, { apiKey })).json.length, 3))
  t.equal(m.nodeCalls, 12, '10 chunks, one call, one call by block hash')
  t.equal(m.units, 12 * LOGS)
})

t.test('a range the gateway refuses as too wide costs one call’s units and no node call', async (t) => {
  const m = await measure(async () => t.equal((await rpc(url, getLogs({ fromBlock: '0x0', toBlock: hex(200_000) }), { apiKey })).json.error?.code, -32602))
  t.same(m, { units: LOGS, nodeCalls: 0 })
})
