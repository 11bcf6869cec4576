import t, { type Test } from 'tap'
import { startHardhat } from '../helpers/hardhat.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metricsPage, readMetric } from '../helpers/metrics.js'
import { deployTransferEmitter, TRANSFER_TOPIC } from '../helpers/transfer-emitter.js'

// Verified reads and calls against a real Hardhat 3.18 (`hardhat node`, EDR 0.22), compared with
// Hardhat asked directly. Hardhat serves no eth_getBlockReceipts and no eth_createAccessList
// (-32004 "Method … is not supported", its message again as data): each verified answer must still
// be Hardhat's own answer, proven, with no node counted and no key penalised.

const hardhat = await startHardhat()
t.teardown(() => hardhat.stop())
const [from, to] = (await hardhat.rpc('eth_accounts')).result as string[]
// A contract answering its storage slot 0 (SLOAD(0) MSTORE RETURN 32 bytes), slot 0 set to 0x2a.
const holder = '0x00000000000000000000000000000000000c0de5'
await hardhat.rpc('hardhat_setCode', [holder, '0x60005460005260206000f3'])
await hardhat.rpc('hardhat_setStorageAt', [holder, '0x0', `0x${'2a'.padStart(64, '0')}`])
const emitter = await deployTransferEmitter(hardhat)
const transfer = (await hardhat.rpc('eth_sendTransaction', [{ from, to, value: '0x1234' }])).result as string
const emitted = await emitter.emit()
const head = (await hardhat.rpc('eth_blockNumber')).result as string

const upstreams = [{ url: hardhat.url, ws: hardhat.wsUrl, kind: 'full' as const, name: 'hardhat' }]
const tg = await startTestGateway(t, {
  networks: {
    'hhreads-1': { chainId: hardhat.chainId, verify: 'reads', upstreams },
    'hhcalls-1': { chainId: hardhat.chainId, verify: 'calls', upstreams },
  },
  config: { diagnostics: { responseHeaders: true }, cache: { enabled: false } },
})
const { apiKey } = await tg.createKey('tier-3')

/** Hardhat's answer without its id. */
function comparable(answer: any): any {
  const { id: _id, ...rest } = answer
  return rest
}
let id = 0
async function both(network: string, method: string, params: unknown[]) {
  const through = await rpc(tg.url(network), { jsonrpc: '2.0', id: ++id, method, params }, { apiKey })
  return { gateway: comparable(through.json), node: comparable(await hardhat.rpc(method, params)), verified: through.headers.get('x-tollgate-verified') }
}
async function noNodeCounted(t: Test, network: string) {
  const page = await metricsPage(tg.gateway.admin)
  const failed = page.split('\n').filter((l) => l.startsWith('tollgate_verify_failed_total') && l.includes(`network="${network}"`) && !l.endsWith(' 0'))
  t.same(failed, [], `${network}: no failed check counted`)
  const out = page.split('\n').filter((l) => l.startsWith('tollgate_upstream_out{') && l.includes(`network="${network}"`) && !l.endsWith(' 0'))
  t.same(out, [], `${network}: hardhat not counted out`)
  t.equal(readMetric(page, 'tollgate_upstream_out', { network, node: 'hardhat', reason: 'disputes' }) ?? 0, 0, `${network}: hardhat not sat out`)
}

const reads: Array<[string, unknown[]]> = [
  ['eth_getBalance', [to, head]],
  ['eth_getBalance', [to, 'latest']],
  ['eth_getTransactionCount', [from, 'latest']],
  ['eth_getCode', [holder, 'latest']],
  ['eth_getCode', [emitter.address, head]],
  ['eth_getStorageAt', [holder, '0x0', 'latest']],
  ['eth_getBlockByNumber', [head, true]],
  ['eth_getBlockByNumber', ['0x1', false]],
  ['eth_getTransactionByHash', [transfer]],
  ['eth_getTransactionReceipt', [transfer]],
  ['eth_getTransactionReceipt', [emitted]],
  ['eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', topics: [TRANSFER_TOPIC] }]],
  ['eth_getLogs', [{ fromBlock: '0x0', toBlock: head, address: emitter.address }]],
]

for (const network of ['hhreads-1', 'hhcalls-1']) {
  t.test(`${network}: verified reads answer as Hardhat does, proven`, async (t) => {
    for (const [method, params] of reads) {
      const { gateway, node, verified } = await both(network, method, params)
      t.same(gateway, node, `${method} ${JSON.stringify(params)}`)
      t.ok(verified, `${method}: verified`)
    }
    await noNodeCounted(t, network)
  })
}

t.test('hhcalls-1: a verified eth_call answers as Hardhat does, run on proven state', async (t) => {
  const calls: Array<[string, unknown]> = [
    ['the holder’s slot', { to: holder }],
    ['the emitter (no return data)', { to: emitter.address, data: '0x' }],
    ['a transfer of value to an account', { from, to, value: '0x1' }],
  ]
  for (const [what, tx] of calls) {
    for (const block of ['latest', head]) {
      const { gateway, node, verified } = await both('hhcalls-1', 'eth_call', [tx, block])
      t.same(gateway, node, `${what} at ${block}`)
      t.ok(verified, `${what} at ${block}: verified`)
    }
  }
  await noNodeCounted(t, 'hhcalls-1')
})

t.test('hhcalls-1: a verified eth_estimateGas answers as Hardhat does', async (t) => {
  for (const tx of [
    { from, to, value: '0x1' },
    { from, to: emitter.address },
  ]) {
    for (const block of ['latest', head]) {
      const { gateway, node, verified } = await both('hhcalls-1', 'eth_estimateGas', [tx, block])
      t.same(gateway, node, `${JSON.stringify(tx)} at ${block}`)
      t.ok(verified, `${JSON.stringify(tx)} at ${block}: verified`)
    }
  }
  await noNodeCounted(t, 'hhcalls-1')
})

t.test('hhreads-1: eth_getBlockReceipts, which Hardhat lacks (-32004), is its receipts proven one by one', async (t) => {
  const { gateway, node, verified } = await both('hhreads-1', 'eth_getBlockReceipts', [head])
  t.equal(node.error?.code, -32004, `Hardhat: ${node.error?.message}`)
  const block = (await hardhat.rpc('eth_getBlockByNumber', [head, false])).result
  const receipts = await Promise.all(block.transactions.map(async (hash: string) => (await hardhat.rpc('eth_getTransactionReceipt', [hash])).result))
  t.ok(receipts.length > 0, 'a block with a transaction')
  t.same(gateway, { jsonrpc: '2.0', result: receipts }, 'the gateway: the block’s receipts, as Hardhat answers them one by one')
  t.ok(verified, 'verified')
  await noNodeCounted(t, 'hhreads-1')
})

t.test('/metrics names what verification needs of Hardhat and found it lacks', async (t) => {
  const page = await metricsPage(tg.gateway.admin)
  const lacks = (network: string) =>
    page
      .split('\n')
      .filter((l) => l.startsWith('tollgate_verify_node_lacks{') && l.includes(`network="${network}"`) && l.includes('node="hardhat"') && l.endsWith(' 1'))
      .map((l) => /needs="([^"]+)"/.exec(l)![1])
      .sort()
  t.same(lacks('hhreads-1'), ['eth_getBlockReceipts'], 'reads')
  t.same(lacks('hhcalls-1'), ['eth_createAccessList', 'eth_getBlockReceipts'], 'reads and calls')
})

t.test('no key is penalised: the key is still served', async (t) => {
  const r = await rpc(tg.url('hhreads-1'), { jsonrpc: '2.0', id: 'after', method: 'eth_chainId', params: [] }, { apiKey })
  t.equal(r.json.result, `0x${hardhat.chainId.toString(16)}`)
})
