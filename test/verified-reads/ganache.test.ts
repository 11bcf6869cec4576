import t, { type Test } from 'tap'
import { startGanache } from '../helpers/ganache.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metricsPage, readMetric } from '../helpers/metrics.js'
import { deployTransferEmitter, TRANSFER_TOPIC } from '../helpers/transfer-emitter.js'

// Verified reads and calls against a real Ganache 7.9.2, compared with Ganache asked directly.
// Ganache serves no eth_getBlockReceipts and no eth_createAccessList, and refuses eth_getProof and
// eth_getCode with a `{blockHash}` block (-32700 "Cannot wrap a "object" as a json-rpc type"): each
// verified answer must still be Ganache's own answer, proven, with no node counted and no key
// penalised.

const ganache = await startGanache()
t.teardown(() => ganache.stop())
const [from, to] = (await ganache.rpc('eth_accounts')).result as string[]
// A contract answering its storage slot 0 (SLOAD(0) MSTORE RETURN 32 bytes), slot 0 set to 0x2a.
const holder = '0x00000000000000000000000000000000000c0de5'
const SLOT_0 = `0x${'0'.repeat(64)}`
await ganache.rpc('evm_setAccountCode', [holder, '0x60005460005260206000f3'])
await ganache.rpc('evm_setAccountStorageAt', [holder, SLOT_0, '0x2a'])
const emitter = await deployTransferEmitter(ganache)
const transfer = (await ganache.rpc('eth_sendTransaction', [{ from, to, value: '0x1234' }])).result as string
const emitted = await emitter.emit()
const head = (await ganache.rpc('eth_blockNumber')).result as string

const upstreams = [{ url: ganache.url, ws: ganache.wsUrl, kind: 'full' as const, name: 'ganache' }]
const tg = await startTestGateway(t, {
  networks: {
    'ganreads-1': { chainId: ganache.chainId, verify: 'reads', upstreams },
    'gancalls-1': { chainId: ganache.chainId, verify: 'calls', upstreams },
  },
  config: { diagnostics: { responseHeaders: true }, cache: { enabled: false } },
})
const { apiKey } = await tg.createKey('tier-3')

/** Ganache's answer without its id, and without the stack it adds to an error. */
function comparable(answer: any): any {
  const { id: _id, ...rest } = answer
  if (rest.error === undefined) return rest
  const { stack: _stack, ...error } = rest.error
  return { ...rest, error }
}
let id = 0
async function both(network: string, method: string, params: unknown[]) {
  const through = await rpc(tg.url(network), { jsonrpc: '2.0', id: ++id, method, params }, { apiKey })
  return { gateway: comparable(through.json), node: comparable(await ganache.rpc(method, params)), verified: through.headers.get('x-tollgate-verified') }
}
async function noNodeCounted(t: Test, network: string) {
  const page = await metricsPage(tg.gateway.admin)
  const failed = page.split('\n').filter((l) => l.startsWith('tollgate_verify_failed_total') && l.includes(`network="${network}"`) && !l.endsWith(' 0'))
  t.same(failed, [], `${network}: no failed check counted`)
  t.equal(readMetric(page, 'tollgate_upstream_out', { network, node: 'ganache', reason: 'disputes' }) ?? 0, 0, `${network}: ganache not sat out`)
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

for (const network of ['ganreads-1', 'gancalls-1']) {
  t.test(`${network}: verified reads answer as Ganache does, proven`, async (t) => {
    for (const [method, params] of reads) {
      const { gateway, node, verified } = await both(network, method, params)
      t.same(gateway, node, `${method} ${JSON.stringify(params)}`)
      t.ok(verified, `${method}: verified`)
    }
    await noNodeCounted(t, network)
  })
}

t.test('gancalls-1: a verified eth_call answers as Ganache does, run on proven state', async (t) => {
  const calls: Array<[string, unknown]> = [
    ['the holder’s slot', { to: holder }],
    ['the emitter (no return data)', { to: emitter.address, data: '0x' }],
    ['a transfer of value to an account', { from, to, value: '0x1' }],
  ]
  for (const [what, tx] of calls) {
    for (const block of ['latest', head]) {
      const { gateway, node, verified } = await both('gancalls-1', 'eth_call', [tx, block])
      t.same(gateway, node, `${what} at ${block}`)
      t.ok(verified, `${what} at ${block}: verified`)
    }
  }
  await noNodeCounted(t, 'gancalls-1')
})

t.test('gancalls-1: a verified eth_estimateGas answers as Ganache does', async (t) => {
  for (const tx of [
    { from, to, value: '0x1' },
    { from, to: emitter.address },
  ]) {
    for (const block of ['latest', head]) {
      const { gateway, node, verified } = await both('gancalls-1', 'eth_estimateGas', [tx, block])
      t.same(gateway, node, `${JSON.stringify(tx)} at ${block}`)
      t.ok(verified, `${JSON.stringify(tx)} at ${block}: verified`)
    }
  }
  await noNodeCounted(t, 'gancalls-1')
})

t.test('/metrics names what verification needs of Ganache and found it lacks', async (t) => {
  const page = await metricsPage(tg.gateway.admin)
  const lacks = (network: string) =>
    page
      .split('\n')
      .filter((l) => l.startsWith('tollgate_verify_node_lacks{') && l.includes(`network="${network}"`) && l.includes('node="ganache"') && l.endsWith(' 1'))
      .map((l) => /needs="([^"]+)"/.exec(l)![1])
      .sort()
  t.same(lacks('ganreads-1'), ['eth_getBlockReceipts', 'eth_getCode by blockHash', 'eth_getProof by blockHash'], 'reads')
  t.same(
    lacks('gancalls-1'),
    [
      'eth_call by blockHash',
      'eth_createAccessList',
      'eth_estimateGas by blockHash',
      'eth_getBlockReceipts',
      'eth_getCode by blockHash',
      'eth_getProof by blockHash',
    ],
    'reads and calls',
  )
})

t.test('no key is penalised: the key is still served', async (t) => {
  const r = await rpc(tg.url('ganreads-1'), { jsonrpc: '2.0', id: 'after', method: 'eth_chainId', params: [] }, { apiKey })
  t.equal(r.json.result, `0x${ganache.chainId.toString(16)}`)
})
