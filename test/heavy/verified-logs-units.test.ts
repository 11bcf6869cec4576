import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { METHODS } from '../../src/rpc/method-table.js'
import { startCountingProxy } from '../helpers/counting-proxy.js'
import { waitFor } from '../helpers/eventually.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metric } from '../helpers/metrics.js'

// A verified eth_getLogs makes a header call per block of its range (docs/verified-answers.md):
// its work follows its charge. The range is bounded over the client's whole call (2,000 blocks),
// not per part of a split range, and charged its header calls at admission beside its chunks.
// Chunks of 40 blocks, so that 2,001 blocks are 51 parts each far under the bound: as 100,000
// blocks are at the defaults, where a bound per part let them all be proven.
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
await anvil.rpc('anvil_mine', ['0x834']) // 2,100 blocks
const head = parseInt((await anvil.rpc('eth_blockNumber')).result, 16)
const proxy = await startCountingProxy(anvil)
t.teardown(() => proxy.close())

const tg = await startTestGateway(t, {
  networks: { 'eth-1': { chainId: 31337, verify: 'reads', upstreams: [{ url: proxy.url, kind: 'full' as const }] } },
  config: { heavy: { getLogs: { chunkBlocks: 40 } }, cache: { enabled: false } },
})
const { apiKey } = await tg.createKey('tier-3')
const url = tg.url('eth-1')
const LOGS = METHODS.eth_getLogs.cost
const HEADER = METHODS.eth_getBlockByNumber.cost
const hex = (n: number) => `0x${n.toString(16)}`
await waitFor(async () => (await metric(tg.gateway.admin, 'tollgate_upstream_head_block')) === head, 'the gateway to see the head')

/** Units served, and node eth_getLogs and header calls caused by `send`. */
async function measure(send: () => Promise<unknown>): Promise<{ units: number; logsCalls: number; headerCalls: number }> {
  const units0 = (await metric(tg.gateway.admin, 'tollgate_units_served_total')) ?? 0
  const [logs0, headers0] = [proxy.count('eth_getLogs'), proxy.count('eth_getBlockByNumber')]
  await send()
  const units = ((await metric(tg.gateway.admin, 'tollgate_units_served_total')) ?? 0) - units0
  return { units, logsCalls: proxy.count('eth_getLogs') - logs0, headerCalls: proxy.count('eth_getBlockByNumber') - headers0 }
}
const getLogs = (filter: object) => ({ jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [filter] })

t.test('a verified range of 400 blocks is charged its 10 chunks and its 400 header calls', async (t) => {
  const [from, to] = [1001, 1400]
  const m = await measure(async () => {
    const r = await rpc(url, getLogs({ fromBlock: hex(from), toBlock: hex(to) }), { apiKey })
    t.same(r.json.result, [], JSON.stringify(r.json).slice(0, 200))
  })
  t.equal(m.logsCalls, 10, 'the node was asked for logs 10 times')
  t.ok(m.headerCalls <= 400, `${m.headerCalls} header calls, at most one a block`)
  t.equal(m.units, 10 * LOGS + 400 * HEADER, 'charged its chunks and a header call a block')
})

t.test('a verified range of 2,001 blocks is refused before any node is asked, with the range that would be proven', async (t) => {
  const m = await measure(async () => {
    const r = await rpc(url, getLogs({ fromBlock: hex(1), toBlock: hex(2001) }), { apiKey })
    t.equal(r.json.error?.code, -32027, `VERIFY_RANGE_TOO_WIDE (${JSON.stringify(r.json).slice(0, 300)})`)
    t.match(r.json.error?.message, /2001 blocks .*at most 2000 .*narrower block range.*\[0x1, 0x7d0\]/, 'the message names the bound and a range within it')
  })
  t.same({ logsCalls: m.logsCalls, headerCalls: m.headerCalls }, { logsCalls: 0, headerCalls: 0 }, 'no node call')
  t.equal(m.units, 0, 'refused before forwarding: no units')
  t.equal(
    await metric(tg.gateway.admin, 'tollgate_verified_calls_total', { network: 'eth-1', method: 'eth_getLogs', outcome: 'refused' }),
    1,
    'counted as refused',
  )
})

t.test('up to latest, the range is measured against the head', async (t) => {
  const r = await rpc(url, getLogs({ fromBlock: hex(head - 2000), toBlock: 'latest' }), { apiKey })
  t.equal(r.json.error?.code, -32027, '2,001 blocks to latest: refused')
})
