import t from 'tap'
import { startGanache } from '../helpers/ganache.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metric } from '../helpers/metrics.js'
import { deployTransferEmitter, TRANSFER_TOPIC } from '../helpers/transfer-emitter.js'
import { connectWs } from '../helpers/ws-client.js'

// A second real node implementation behind the gateway: Ganache 7.9.2, its own process. Every
// case is asked of the node directly and through the gateway, and the two answers compared (ids
// aside): ordinary calls, reverts, errors in Ganache's dialect (-32700 for "header not found" and
// an unknown filter, with a stack), filters, subscriptions. Verified reads and calls against
// Ganache: test/verified-reads/ganache.test.ts.

const ganache = await startGanache()
t.teardown(() => ganache.stop())
const tg = await startTestGateway(t, {
  networks: { 'gan-1': { chainId: ganache.chainId, upstreams: [{ url: ganache.url, ws: ganache.wsUrl, kind: 'full', name: 'ganache' }] } },
})
const { apiKey } = await tg.createKey('tier-3')
const [from, to] = (await ganache.rpc('eth_accounts')).result as string[]
const emitter = await deployTransferEmitter(ganache)
const transfer = (await ganache.rpc('eth_sendTransaction', [{ from, to, value: '0x1234' }])).result as string
await emitter.emit()
const head = async () => parseInt((await ganache.rpc('eth_blockNumber')).result, 16)

let id = 0
/** An answer without its id, and without the stack Ganache adds to an error (its own code's path, which differs by transport). */
function comparable(answer: any): any {
  const { id: _id, ...rest } = answer
  if (rest.error === undefined) return rest
  const { stack: _stack, ...error } = rest.error
  return { ...rest, error }
}
/** The same call through the gateway (HTTP) and straight to Ganache: both answers, ids taken out. */
async function both(method: string, params: unknown[]): Promise<{ gateway: any; node: any; cache: string | null }> {
  const through = await rpc(tg.url('gan-1'), { jsonrpc: '2.0', id: ++id, method, params }, { apiKey })
  const node = await ganache.rpc(method, params)
  return { gateway: comparable(through.json), node: comparable(node), cache: through.headers.get('x-tollgate-cache') }
}

t.test('ordinary calls answer as Ganache does', async (t) => {
  const cases: Array<[string, unknown[]]> = [
    ['eth_chainId', []],
    ['eth_blockNumber', []],
    ['eth_getBalance', [to, 'latest']],
    ['eth_getTransactionCount', [from, 'latest']],
    ['eth_getBlockByNumber', ['0x1', false]],
    ['eth_getBlockByNumber', ['latest', true]],
    ['eth_getTransactionByHash', [transfer]],
    ['eth_getTransactionReceipt', [transfer]],
    ['eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', topics: [TRANSFER_TOPIC] }]],
    ['eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', address: emitter.address }]],
    ['eth_getCode', [emitter.address, 'latest']],
    ['eth_gasPrice', []],
    ['eth_estimateGas', [{ from, to, value: '0x1' }]],
    ['eth_call', [{ to: emitter.address, data: '0x' }, 'latest']],
  ]
  for (const [method, params] of cases) {
    const { gateway, node } = await both(method, params)
    t.same(gateway, node, `${method} ${JSON.stringify(params)}`)
  }
  const logs = (await both('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', topics: [TRANSFER_TOPIC] }])).gateway.result
  t.equal(logs.length, 1, 'the emitter’s one log')
})

t.test('a revert answers with Ganache’s code, message and data', async (t) => {
  // Creation code that reverts with 32 bytes of data (0x2a): PUSH1 2a PUSH1 0 MSTORE PUSH1 20 PUSH1 0 REVERT.
  const reverting = { from, data: '0x602a60005260206000fd' }
  for (const [method, params] of [
    ['eth_call', [reverting, 'latest']],
    ['eth_estimateGas', [reverting]],
  ] as Array<[string, unknown[]]>) {
    const { gateway, node } = await both(method, params)
    t.ok(node.error, `${method}: Ganache refuses it (${node.error?.message})`)
    t.same(gateway, node, `${method}: the same error`)
  }
})

t.test('Ganache’s -32700 errors are its answers, and no key is penalised for them', async (t) => {
  const ahead = `0x${((await head()) + 1000).toString(16)}`
  const { gateway, node } = await both('eth_getBalance', [to, ahead])
  t.equal(node.error?.code, -32700, 'Ganache: -32700 "header not found"')
  t.same(gateway, node, 'passed on as Ganache said it')
  const ws = await connectWs(`${tg.wsUrl('gan-1')}?apikey=${apiKey}`)
  t.teardown(() => ws.close())
  for (let i = 0; i < 25; i++) {
    const r = await ws.call({ jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [to, ahead] })
    if (r.error?.code !== -32700) t.fail(`call ${i}: ${JSON.stringify(r.error)}`)
  }
  t.equal(
    (await ws.call({ jsonrpc: '2.0', id: 'after', method: 'eth_chainId', params: [] })).result,
    ganache.chainId === 1337 ? '0x539' : undefined,
    'still served',
  )
})

t.test('filters: made, polled and uninstalled as on Ganache; an unknown one as Ganache answers it', async (t) => {
  const made = await rpc(tg.url('gan-1'), { jsonrpc: '2.0', id: 'f', method: 'eth_newBlockFilter', params: [] }, { apiKey })
  const filter = made.json.result as string
  t.type(filter, 'string', 'a block filter')
  await ganache.rpc('evm_mine')
  const changes = await rpc(tg.url('gan-1'), { jsonrpc: '2.0', id: 'c', method: 'eth_getFilterChanges', params: [filter] }, { apiKey })
  const latest = (await ganache.rpc('eth_getBlockByNumber', ['latest', false])).result.hash
  t.same(changes.json.result, [latest], 'the block mined since')
  const unknown = '0x' + '7'.repeat(32)
  const gone = await both('eth_uninstallFilter', [unknown])
  t.same(gone.gateway, gone.node, 'uninstalling an unknown filter: false, as Ganache says')
  t.same(gone.gateway.result, false)
  const uninstalled = await rpc(tg.url('gan-1'), { jsonrpc: '2.0', id: 'u', method: 'eth_uninstallFilter', params: [filter] }, { apiKey })
  t.equal(uninstalled.json.result, true)
})

t.test('a filter Ganache dropped frees its place: its "filter not found" (-32700) is read as gone', async (t) => {
  const made = await rpc(tg.url('gan-1'), { jsonrpc: '2.0', id: 'f', method: 'eth_newBlockFilter', params: [] }, { apiKey })
  const filter = made.json.result as string
  const held = () => metric(tg.gateway.admin, 'tollgate_filters_pinned')
  const before = await held()
  // As Ganache's own restart or time-out would: the filter is gone from the node alone.
  t.equal((await ganache.rpc('eth_uninstallFilter', [filter])).result, true)
  const r = await rpc(tg.url('gan-1'), { jsonrpc: '2.0', id: 'p', method: 'eth_getFilterChanges', params: [filter] }, { apiKey })
  t.same(r.json.error?.code, -32700, "Ganache's own answer, passed on")
  t.match(r.json.error?.message, /^filter not found/)
  t.equal(await held(), before! - 1, 'the pin is dropped')
})

t.test('subscriptions over WebSocket carry Ganache’s heads', async (t) => {
  const ws = await connectWs(`${tg.wsUrl('gan-1')}?apikey=${apiKey}`)
  t.teardown(() => ws.close())
  const sub = await ws.call({ jsonrpc: '2.0', id: 's', method: 'eth_subscribe', params: ['newHeads'] })
  t.type(sub.result, 'string', 'subscribed')
  const next = ws.nextNotification(sub.result)
  await ganache.rpc('evm_mine')
  const note = await next
  const latest = (await ganache.rpc('eth_getBlockByNumber', ['latest', false])).result
  t.equal(note?.params.result.hash, latest.hash, 'the head Ganache mined')
  t.equal(note?.params.result.number, latest.number)
})

t.test('a head Ganache calls finalized is not cached as final, and evm_revert is seen at once', async (t) => {
  const tagged = (await ganache.rpc('eth_getBlockByNumber', ['finalized', false])).result
  const latest = (await ganache.rpc('eth_getBlockByNumber', ['latest', false])).result
  t.equal(tagged.number, latest.number, 'Ganache reports finalized = latest')
  const snapshot = (await ganache.rpc('evm_snapshot')).result
  const hash = (await ganache.rpc('eth_sendTransaction', [{ from, to, value: '0x7' }])).result as string
  await tg.gateway.finality!.pollAll()
  const first = await both('eth_getTransactionReceipt', [hash])
  t.same(first.gateway, first.node, 'the receipt')
  await tg.gateway.cache!.flushed()
  const second = await both('eth_getTransactionReceipt', [hash])
  t.equal(second.cache, 'miss', 'not served from the cache: its block is at the head, not finalityDepth below it')
  t.equal((await ganache.rpc('evm_revert', [snapshot])).result, true)
  const after = await both('eth_getTransactionReceipt', [hash])
  t.same(after.node, { jsonrpc: '2.0', result: null }, 'Ganache undid it')
  t.same(after.gateway, after.node, 'and the gateway says so at once')
})

t.test('a method Ganache lacks is read as missing from its -32700 wording', async (t) => {
  const { gateway, node } = await both('eth_getBlockReceipts', ['latest'])
  t.equal(node.error?.code, -32700)
  t.match(node.error?.message, /^The method eth_getBlockReceipts does not exist\/is not available/)
  t.same(gateway, node, "Ganache's answer, passed on")
  const again = await rpc(tg.url('gan-1'), { jsonrpc: '2.0', id: 'm', method: 'eth_getBlockReceipts', params: ['latest'] }, { apiKey })
  t.match(again.json.error?.message, /no full node of gan-1 serves eth_getBlockReceipts/, 'remembered as missing on its only node')
})
