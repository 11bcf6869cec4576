import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { oneNetwork, rpc, startTestGateway } from '../helpers/gateway.js'
import { waitFor } from '../helpers/eventually.js'
import { metric } from '../helpers/metrics.js'
import { connectWs } from '../helpers/ws-client.js'

// What the node reads is what the gateway checked: nodes written in Go (geth, Erigon) read member
// names ignoring case, the last one winning, and the gateway forwards the params as written. A
// member that only differs in case from one the node reads is refused when parsed; the proxy in
// front of a real anvil records the bytes the node is sent, so "nothing reached it" is seen.
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const proxy = await startFaultProxy(anvil)
t.teardown(() => proxy.close())
const tg = await startTestGateway(t, { networks: oneNetwork([{ url: proxy.url }]) })
const key = await tg.createKey('tier-3')
const url = tg.url('eth-1')
const ALLOWED = '0x' + '11'.repeat(20)
const OTHER = '0x' + '22'.repeat(20)
await tg.restrictKey(key.accountId, { contracts: [ALLOWED] }, true)
const send = (body: unknown) => rpc(url, body, { apiKey: key.apiKey })
const call = (method: string, params: unknown[], id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params })

/** The bodies the node is sent while `run` runs, once the gateway's own calls (head polls) are told apart by method. */
async function sentDuring<T>(run: () => Promise<T>): Promise<{ result: T; sent: string[] }> {
  const from = proxy.bodies.length
  const result = await run()
  return { result, sent: proxy.bodies.slice(from) }
}
const naming = (sent: string[], method: string) => sent.filter((b) => b.includes(`"${method}"`))

// The contract rule reaches the request path through the event log: wait until it holds.
await waitFor(async () => (await send(call('eth_call', [{ to: OTHER }, 'latest']))).status === 403, 'the contract rule')

t.test('{"to":ALLOWED,"TO":OTHER}: refused with -32602 naming the member, and no byte of it reaches the node', async (t) => {
  // A control first: the exact name is forwarded, and the recording sees it.
  const allowed = await sentDuring(() => send(call('eth_call', [{ to: ALLOWED, data: '0x' }, 'latest'])))
  t.equal(allowed.result.status, 200)
  t.equal(allowed.result.json.result, '0x')
  t.equal(naming(allowed.sent, 'eth_call').length, 1, 'the node was sent the allowed call')

  for (const tx of [
    { to: ALLOWED, TO: OTHER, data: '0x' },
    { To: OTHER, to: ALLOWED },
    { to: ALLOWED, DATA: '0x00' },
  ]) {
    const { result: r, sent } = await sentDuring(() => send(call('eth_call', [tx, 'latest'], 'x')))
    t.equal(r.status, 200, JSON.stringify(tx))
    t.equal(r.json.id, 'x')
    t.equal(r.json.error?.code, -32602)
    const stray = Object.keys(tx).find((k) => k !== k.toLowerCase() || k === 'DATA')!
    t.match(r.json.error.message, `has a member "${stray}"`)
    t.match(r.json.error.message, `write "${stray.toLowerCase()}"`)
    t.same(naming(sent, 'eth_call'), [], 'nothing of the call reached the node')
  }
})

t.test('"data" and "input" that differ: refused, as nodes run one or the other; equal ones are served', async (t) => {
  const { result: r, sent } = await sentDuring(() => send(call('eth_call', [{ to: ALLOWED, data: '0x01', input: '0x02' }, 'latest'])))
  t.equal(r.json.error?.code, -32602)
  t.match(r.json.error.message, /both "data" and "input", and they differ/)
  t.same(naming(sent, 'eth_call'), [], 'nothing reached the node')
  t.equal((await send(call('eth_call', [{ to: ALLOWED, data: '0x01', input: '0x01' }, 'latest']))).json.result, '0x')
})

t.test('every reader of a batch: the stray call is its own error entry, the rest are served', async (t) => {
  const { result: r, sent } = await sentDuring(() =>
    send([call('eth_chainId', [], 1), call('eth_estimateGas', [{ to: ALLOWED, tO: OTHER }], 2), call('eth_call', [{ to: ALLOWED }, 'latest'], 3)]),
  )
  t.equal(r.status, 200)
  t.equal(r.json[0].result, '0x7a69')
  t.equal(r.json[1].error.code, -32602)
  t.match(r.json[1].error.message, /eth_estimateGas's transaction object has a member "tO"/)
  t.equal(r.json[2].result, '0x')
  t.same(naming(sent, 'eth_estimateGas'), [], 'the stray call was not sent')
})

t.test('a logs filter: "ADDRESS" and "FromBlock"/"ToBlock" beside the exact names are refused before the charge', async (t) => {
  for (const filter of [
    { address: ALLOWED, ADDRESS: null },
    { address: ALLOWED, fromBlock: '0x1', toBlock: '0x1', FromBlock: '0x0', ToBlock: 'latest' },
    // Go folds the Kelvin sign to k and the long s to s: "fromBloc\u212a" is fromBlock to geth.
    { address: ALLOWED, fromBlock: '0x1', toBlock: '0x1', 'fromBloc\u212a': '0x0' },
    { address: ALLOWED, 'addre\u017f\u017f': OTHER },
  ]) {
    const { result: r, sent } = await sentDuring(() => send(call('eth_getLogs', [filter])))
    t.equal(r.json.error?.code, -32602, JSON.stringify(filter))
    t.match(r.json.error.message, /eth_getLogs's logs filter has a member/)
    t.same(naming(sent, 'eth_getLogs'), [], 'nothing reached the node')
  }
  const exact = await sentDuring(() => send(call('eth_getLogs', [{ address: ALLOWED, fromBlock: '0x0', toBlock: '0x0' }])))
  t.same(exact.result.json.result, [], 'the exact filter is served')
  t.equal(naming(exact.sent, 'eth_getLogs').length, 1)
})

t.test('an EIP-1898 block object with a stray member is refused; an exact one is served', async (t) => {
  const { result: r, sent } = await sentDuring(() => send(call('eth_call', [{ to: ALLOWED }, { blockNumber: '0x0', BlockHash: '0x' + '00'.repeat(32) }])))
  t.equal(r.json.error?.code, -32602)
  t.match(r.json.error.message, /eth_call's block object has a member "BlockHash".*write "blockHash"/)
  t.same(naming(sent, 'eth_call'), [])
  t.equal((await send(call('eth_call', [{ to: ALLOWED }, { blockNumber: '0x0' }]))).json.result, '0x')
})

t.test('fromBlock/toBlock as an EIP-1898 object are refused at parse: a filter names a block by hash with blockHash', async (t) => {
  const head = (await anvil.rpc('eth_getBlockByNumber', ['latest', false])).result as { hash: string }
  for (const filter of [{ toBlock: { blockHash: head.hash } }, { fromBlock: { blockNumber: '0x0' }, toBlock: 'latest' }]) {
    const { result: r, sent } = await sentDuring(() => send(call('eth_getLogs', [{ address: ALLOWED, ...filter }])))
    t.equal(r.json.error?.code, -32602, JSON.stringify(filter))
    t.match(r.json.error.message, /eth_getLogs's (toBlock|fromBlock) is an object .*write "blockHash" in the filter itself/)
    t.same(naming(sent, 'eth_getLogs'), [], 'nothing reached the node')
  }
  const byHash = await send(call('eth_getLogs', [{ address: ALLOWED, blockHash: head.hash }]))
  t.same(byHash.json.result, [], "the filter's own blockHash is served")
})

t.test('over WebSocket the same: a stray call and a logs subscription with "ADDRESS" are refused, nothing sent', async (t) => {
  const ws = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${key.apiKey}`)
  t.teardown(() => ws.close())
  const { result: r, sent } = await sentDuring(() => ws.call(call('eth_call', [{ to: ALLOWED, TO: OTHER }, 'latest'], 5)))
  t.equal(r.id, 5)
  t.equal(r.error?.code, -32602)
  t.match(r.error.message, /has a member "TO"/)
  t.same(naming(sent, 'eth_call'), [])
  const sub = await ws.call(call('eth_subscribe', ['logs', { address: ALLOWED, ADDRESS: OTHER }], 6))
  t.equal(sub.error?.code, -32602)
  t.match(sub.error.message, /eth_subscribe's logs filter has a member "ADDRESS"/)
  t.equal((await ws.call(call('eth_chainId', [], 7))).result, '0x7a69', 'the connection goes on')
})

t.test('the refusals are counted on /metrics by code', async (t) => {
  t.ok(((await metric(tg.gateway.admin, 'tollgate_params_refused_total', { code: 'PARAMS_MEMBER_CASE' })) ?? 0) >= 11)
  t.ok(((await metric(tg.gateway.admin, 'tollgate_params_refused_total', { code: 'LOGS_BOUND_OBJECT' })) ?? 0) >= 2)
  t.ok(((await metric(tg.gateway.admin, 'tollgate_params_refused_total', { code: 'CALL_DATA_AMBIGUOUS' })) ?? 0) >= 1)
})
