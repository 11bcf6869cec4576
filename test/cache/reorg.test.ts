import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { until } from '../helpers/eventually.js'
import { receiptOf } from '../../harness/anvil.js'

// After anvil_reorg no stale block is served: blocks above the finalized one were never cached,
// and a reorg that reaches below it (possible on a dev chain only) drops the network's cache.
const {
  anvil,
  tg,
  key: { apiKey },
} = await anvilGateway(t, {
  nodeWs: false,
  beforeGateway: (node) => node.rpc('anvil_mine', ['0x64']),
  config: { cache: { finalityPollMs: 100 } },
})
const block = (n: string, id = 1) => rpc(tg.url('eth-1'), { jsonrpc: '2.0', id, method: 'eth_getBlockByNumber', params: [n, false] }, { apiKey })
const nodeBlock = async (n: string) => (await anvil.rpc('eth_getBlockByNumber', [n, false])).result

t.test('a shallow reorg: the new blocks are served', async (t) => {
  const before = await block('0x62')
  t.equal(before.json.result.hash, (await nodeBlock('0x62')).hash)
  await anvil.rpc('anvil_reorg', [5, []])
  const after = await block('0x62')
  const now = await nodeBlock('0x62')
  t.not(now.hash, before.json.result.hash, 'the node has a new block 0x62')
  t.equal(after.json.result.hash, now.hash, 'and the gateway serves it')
})

t.test('a reorg below the finalized block drops the cached blocks', async (t) => {
  t.ok(await until(() => tg.gateway.finality!.finalized('eth-1') === 0x64 - 64), 'finalized block known')
  await block('0x14')
  await tg.gateway.cache!.flushed()
  const cached = await block('0x14', 2)
  t.equal(cached.headers.get('x-tollgate-cache'), 'hit', 'block 0x14 is final and cached')
  const generation = tg.gateway.cache!.generation('eth-1')

  await anvil.rpc('anvil_reorg', [90, []])
  const now = await nodeBlock('0x14')
  t.not(now.hash, cached.json.result.hash, 'the node replaced block 0x14')
  t.ok(await until(() => tg.gateway.cache!.generation('eth-1') > generation), 'the gateway saw the finalized block change')
  const after = await block('0x14', 3)
  t.equal(after.headers.get('x-tollgate-cache'), 'miss')
  t.equal(after.json.result.hash, now.hash, 'the new block, not the cached one')
  const metrics = await (await fetch(`${tg.gateway.admin}/metrics`)).text()
  t.match(metrics, /tollgate_cache_invalidations_total\{network="eth-1"\} 1/)
})

t.test('evm_revert below the finalized block: a cached receipt becomes the node’s null within the poll', async (t) => {
  const snapshot = (await anvil.rpc('evm_snapshot')).result
  const [from, to] = (await anvil.rpc('eth_accounts')).result as string[]
  const hash = (await anvil.rpc('eth_sendTransaction', [{ from, to, value: '0x1' }])).result as string
  // Anvil answers the hash before its receipt can be read: wait for the receipt, not for time.
  const mined = parseInt((await receiptOf(anvil, hash)).blockNumber, 16)
  await anvil.rpc('anvil_mine', ['0x41']) // 65 more: the transaction's block is at or below anvil's head − 64
  t.ok(await until(() => (tg.gateway.finality!.finalized('eth-1') ?? 0) >= mined), 'its block is final')
  const receipt = (id: number) => rpc(tg.url('eth-1'), { jsonrpc: '2.0', id, method: 'eth_getTransactionReceipt', params: [hash] }, { apiKey })
  await receipt(10)
  await tg.gateway.cache!.flushed()
  const cached = await receipt(11)
  t.equal(cached.headers.get('x-tollgate-cache'), 'hit', 'the receipt is cached')

  t.equal((await anvil.rpc('evm_revert', [snapshot])).result, true)
  t.equal((await anvil.rpc('eth_getTransactionReceipt', [hash])).result, null, 'the node undid it')
  // Bounded by the poll (cache.finalityPollMs, 100 ms here): waited on, with until's own bound.
  t.ok(await until(async () => (await receipt(12)).json.result === null), 'the gateway answers the node’s null')
  const after = await receipt(13)
  t.equal(after.json.result, null)
  t.equal(after.headers.get('x-tollgate-cache'), 'miss', 'asked of the node: a null is never cached')
})
