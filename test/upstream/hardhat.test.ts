import t from 'tap'
import { startHardhat } from '../helpers/hardhat.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metric, metricsPage, readMetric } from '../helpers/metrics.js'
import { deployTransferEmitter, TRANSFER_TOPIC } from '../helpers/transfer-emitter.js'
import { connectWs } from '../helpers/ws-client.js'
import { privateKeyToAccount } from 'viem/accounts'

// A third real node implementation behind the gateway: Hardhat 3.18's `hardhat node` (EDR
// 0.22), its own process. Every case is asked of the node directly and through the gateway, and
// the two answers compared (ids aside): ordinary calls, reverts, errors in Hardhat's dialect (-32004
// with `data` for a method it lacks, -32000 for a block ahead, `null` for an unknown filter),
// filters, subscriptions, a batch. Verified reads and calls against Hardhat: test/verified-reads/hardhat.test.ts.

const hardhat = await startHardhat()
t.teardown(() => hardhat.stop())
const tg = await startTestGateway(t, {
  networks: { 'hh-1': { chainId: hardhat.chainId, upstreams: [{ url: hardhat.url, ws: hardhat.wsUrl, kind: 'full', name: 'hardhat' }] } },
})
const { apiKey } = await tg.createKey('tier-3')
const [from, to] = (await hardhat.rpc('eth_accounts')).result as `0x${string}`[]
const emitter = await deployTransferEmitter(hardhat)
const transfer = (await hardhat.rpc('eth_sendTransaction', [{ from, to, value: '0x1234' }])).result as string
await emitter.emit()
const head = async () => parseInt((await hardhat.rpc('eth_blockNumber')).result, 16)

let id = 0
/** An answer without its id. */
function comparable(answer: any): any {
  const { id: _id, ...rest } = answer
  return rest
}
/** The same call through the gateway (HTTP) and straight to Hardhat: both answers, ids taken out. */
async function both(method: string, params: unknown[]): Promise<{ gateway: any; node: any }> {
  const through = await rpc(tg.url('hh-1'), { jsonrpc: '2.0', id: ++id, method, params }, { apiKey })
  const node = await hardhat.rpc(method, params)
  return { gateway: comparable(through.json), node: comparable(node) }
}

t.test('ordinary calls answer as Hardhat does', async (t) => {
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

t.test('a batch answers as Hardhat answers the same batch', async (t) => {
  const calls = [
    { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] },
    { jsonrpc: '2.0', id: 2, method: 'eth_getBalance', params: [to, 'latest'] },
    { jsonrpc: '2.0', id: 3, method: 'eth_getTransactionReceipt', params: [transfer] },
    { jsonrpc: '2.0', id: 4, method: 'eth_call', params: [{ from, data: '0x602a60005260206000fd' }, 'latest'] },
    { jsonrpc: '2.0', id: 5, method: 'eth_getCode', params: [emitter.address, 'latest'] },
  ]
  const through = await rpc(tg.url('hh-1'), calls, { apiKey })
  const node = await (await fetch(hardhat.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(calls) })).json()
  const byId = (answers: any[]) => [...answers].sort((a, b) => a.id - b.id)
  t.equal(through.status, 200)
  t.same(byId(through.json), byId(node), 'every answer Hardhat’s own, ids kept')
})

t.test('a revert answers with Hardhat’s code, message and data', async (t) => {
  // Creation code that reverts with 32 bytes of data (0x2a): PUSH1 2a PUSH1 0 MSTORE PUSH1 20 PUSH1 0 REVERT.
  const reverting = { from, data: '0x602a60005260206000fd' }
  for (const [method, params] of [
    ['eth_call', [reverting, 'latest']],
    ['eth_estimateGas', [reverting]],
  ] as Array<[string, unknown[]]>) {
    const { gateway, node } = await both(method, params)
    t.ok(node.error, `${method}: Hardhat refuses it (${node.error?.message})`)
    t.same(gateway, node, `${method}: the same error`)
  }
})

t.test('Hardhat’s answer to a block ahead is its answer, and no key is penalised for it', async (t) => {
  const ahead = `0x${((await head()) + 1000).toString(16)}`
  const { gateway, node } = await both('eth_getBalance', [to, ahead])
  t.equal(node.error?.code, -32000, 'Hardhat: -32000 "Received invalid block tag …"')
  t.same(gateway, node, 'passed on as Hardhat said it')
  const ws = await connectWs(`${tg.wsUrl('hh-1')}?apikey=${apiKey}`)
  t.teardown(() => ws.close())
  for (let i = 0; i < 25; i++) {
    const r = await ws.call({ jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [to, ahead] })
    if (r.error?.code !== -32000) t.fail(`call ${i}: ${JSON.stringify(r.error)}`)
  }
  t.equal((await ws.call({ jsonrpc: '2.0', id: 'after', method: 'eth_chainId', params: [] })).result, '0x7a69', 'still served')
  const page = await metricsPage(tg.gateway.admin)
  const out = page.split('\n').filter((l) => l.startsWith('tollgate_upstream_out{') && l.includes('node="hardhat"') && !l.endsWith(' 0'))
  t.same(out, [], 'the node is not counted out')
})

t.test('filters: made, polled and uninstalled as on Hardhat; an unknown one as Hardhat answers it', async (t) => {
  const made = await rpc(tg.url('hh-1'), { jsonrpc: '2.0', id: 'f', method: 'eth_newBlockFilter', params: [] }, { apiKey })
  const filter = made.json.result as string
  t.type(filter, 'string', 'a block filter')
  // Hardhat's first poll of a block filter also names the head it was made at: asked of a filter
  // made on Hardhat directly at the same head, it answers the same blocks.
  const direct = (await hardhat.rpc('eth_newBlockFilter')).result as string
  await hardhat.rpc('evm_mine')
  const changes = await rpc(tg.url('hh-1'), { jsonrpc: '2.0', id: 'c', method: 'eth_getFilterChanges', params: [filter] }, { apiKey })
  const latest = (await hardhat.rpc('eth_getBlockByNumber', ['latest', false])).result.hash
  t.same(changes.json.result, (await hardhat.rpc('eth_getFilterChanges', [direct])).result, 'the blocks Hardhat names to its own filter')
  t.equal(changes.json.result.at(-1), latest, 'the block mined since last')
  const unknown = '0x' + '7'.repeat(32)
  const gone = await both('eth_uninstallFilter', [unknown])
  t.same(gone.gateway, gone.node, 'uninstalling an unknown filter: false, as Hardhat says')
  t.same(gone.gateway.result, false)
  const uninstalled = await rpc(tg.url('hh-1'), { jsonrpc: '2.0', id: 'u', method: 'eth_uninstallFilter', params: [filter] }, { apiKey })
  t.equal(uninstalled.json.result, true)
})

t.test('a filter Hardhat dropped frees its place: its null answer is read as gone', async (t) => {
  for (const method of ['eth_getFilterChanges', 'eth_getFilterLogs']) {
    const made = await rpc(tg.url('hh-1'), { jsonrpc: '2.0', id: 'f', method: 'eth_newFilter', params: [{ fromBlock: 'latest' }] }, { apiKey })
    const filter = made.json.result as string
    const held = () => metric(tg.gateway.admin, 'tollgate_filters_pinned')
    const before = await held()
    // As Hardhat's own restart or time-out would: the filter is gone from the node alone.
    t.equal((await hardhat.rpc('eth_uninstallFilter', [filter])).result, true)
    const node = await hardhat.rpc(method, [filter])
    t.same(node.result, null, `${method}: Hardhat answers null for a filter it does not hold`)
    const r = await rpc(tg.url('hh-1'), { jsonrpc: '2.0', id: 'p', method, params: [filter] }, { apiKey })
    t.same(comparable(r.json), comparable(node), "Hardhat's own answer, passed on")
    t.equal(await held(), before! - 1, `${method}: the pin is dropped`)
  }
})

t.test('subscriptions over WebSocket carry Hardhat’s heads', async (t) => {
  const ws = await connectWs(`${tg.wsUrl('hh-1')}?apikey=${apiKey}`)
  t.teardown(() => ws.close())
  const sub = await ws.call({ jsonrpc: '2.0', id: 's', method: 'eth_subscribe', params: ['newHeads'] })
  t.type(sub.result, 'string', 'subscribed')
  const next = ws.nextNotification(sub.result)
  await hardhat.rpc('evm_mine')
  const note = await next
  const latest = (await hardhat.rpc('eth_getBlockByNumber', ['latest', false])).result
  t.equal(note?.params.result.hash, latest.hash, 'the head Hardhat mined')
  t.equal(note?.params.result.number, latest.number)
})

t.test('a method Hardhat lacks is read as missing from its -32004', async (t) => {
  const { gateway, node } = await both('eth_getBlockReceipts', ['latest'])
  t.equal(node.error?.code, -32004)
  t.match(node.error?.message, /^Method eth_getBlockReceipts is not supported/)
  t.same(gateway, node, "Hardhat's answer, passed on")
  const again = await rpc(tg.url('hh-1'), { jsonrpc: '2.0', id: 'm', method: 'eth_getBlockReceipts', params: ['latest'] }, { apiKey })
  t.match(again.json.error?.message, /no full node of hh-1 serves eth_getBlockReceipts/, 'remembered as missing on its only node')
  t.equal(readMetric(await metricsPage(tg.gateway.admin), 'tollgate_upstream_out', { network: 'hh-1', node: 'hardhat', reason: 'disputes' }) ?? 0, 0)
})

t.test('a transaction sent again answers its hash: Hardhat’s "Nonce too low" (mined) and "Known transaction" (pooled)', async (t) => {
  // Hardhat's first account (anvil's too): the raw transactions are signed here, as a wallet does.
  const account = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80')
  const fees = { maxFeePerGas: 10_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n }
  const sign = async (nonce: number) => account.signTransaction({ chainId: hardhat.chainId, to, value: 1n, gas: 21_000n, ...fees, nonce })
  const send = (raw: string) => rpc(tg.url('hh-1'), { jsonrpc: '2.0', id: 'tx', method: 'eth_sendRawTransaction', params: [raw] }, { apiKey })
  const nonce = async () => parseInt((await hardhat.rpc('eth_getTransactionCount', [account.address, 'pending'])).result, 16)

  const mined = await sign(await nonce())
  const first = await send(mined)
  t.type(first.json.result, 'string', 'sent and mined at once')
  t.match((await hardhat.rpc('eth_sendRawTransaction', [mined])).error?.message, /^Nonce too low/, 'Hardhat refuses it again')
  t.same((await send(mined)).json, { jsonrpc: '2.0', id: 'tx', result: first.json.result }, 'the gateway answers its hash again')

  t.equal((await hardhat.rpc('evm_setAutomine', [false])).result, true)
  t.teardown(() => hardhat.rpc('evm_setAutomine', [true]))
  const pooled = await sign(await nonce())
  const sent = await send(pooled)
  t.type(sent.json.result, 'string', 'sent, pooled')
  t.match((await hardhat.rpc('eth_sendRawTransaction', [pooled])).error?.message, /^Known transaction: 0x/, 'Hardhat refuses it again')
  t.same((await send(pooled)).json, { jsonrpc: '2.0', id: 'tx', result: sent.json.result }, 'the gateway answers its hash again')
  await hardhat.rpc('evm_mine')
})
