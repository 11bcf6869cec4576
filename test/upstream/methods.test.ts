import t, { type Test } from 'tap'
import { WebSocket } from 'undici'
import { rawRpc, startAnvil, receiptOf } from '../../harness/anvil.js'
import { until } from '../helpers/eventually.js'
import { httpAndWsPools } from '../helpers/upstream-pool.js'

// Every method of the spec's table, through the pool (an HTTP-only node and a WebSocket node),
// answers byte for byte what anvil answers directly to the same request: the gateway is
// transparent (only the id is rewritten, and here the client's id is the one anvil got).

// Setup runs before any t.* call: tap ends the root test (running its teardowns) once it is idle,
// and a top-level await does not keep it busy.
const anvil = await startAnvil()
t.teardown(() => anvil.stop())

const { pools, httpNode, wsNode, wsOpened } = await httpAndWsPools(t, anvil, 'archive')

// The reference for the WebSocket node is anvil over its own WebSocket: anvil answers some
// errors differently on its two transports (an unknown method is -32601 over HTTP, -32602 over WS).
const directWs = new WebSocket(anvil.wsUrl)
await new Promise((resolve, reject) => {
  directWs.addEventListener('open', resolve)
  directWs.addEventListener('error', reject)
})
function rawWsRpc(body: string): Promise<string> {
  return new Promise((resolve) => {
    // One request at a time on this socket: the next message is its answer.
    directWs.addEventListener('message', (ev) => resolve(String(ev.data)), { once: true })
    directWs.send(body)
  })
}

const direct = async (method: string, params: unknown[] = []) => {
  const answer = await anvil.rpc(method, params)
  if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`)
  return answer.result
}

// Setup on anvil directly: a contract that stores 42, logs at construction and returns slot 0; a transfer.
const TOPIC = 'ab'.repeat(32)
const RUNTIME = '600054600052602060' + '00f3'
const INIT = '602a600055' + '7f' + TOPIC + '60006000a1' + '600b603760003' + '9' + '600b6000f3' + RUNTIME
const [from, to] = await direct('eth_accounts')
const deployHash = await direct('eth_sendTransaction', [{ from, data: '0x' + INIT }])
const deploy = await receiptOf(anvil, deployHash)
const contract = deploy.contractAddress
const transferHash = await direct('eth_sendTransaction', [{ from, to, value: '0x3e8' }])
const block = await direct('eth_getBlockByNumber', ['latest', false])
t.teardown(() => directWs.close())
t.ok(wsOpened, 'the node WebSocket opens')
t.equal(deploy.status, '0x1', 'contract deployed')

/** Anvil does not serve these: the node's JSON-RPC error must come back as it is. */
const NOT_ON_ANVIL = new Set(['net_peerCount', 'trace_get', 'trace_call', 'trace_rawTransaction'])

async function sameAsDirect(t: Test, method: string, params: unknown[]): Promise<void> {
  for (const [label, pool] of Object.entries(pools)) {
    const idJson = JSON.stringify(`${label}:${method}`)
    const request = `{"jsonrpc":"2.0","id":${idJson},"method":"${method}","params":${JSON.stringify(params)}}`
    let expected = label === 'ws' ? await rawWsRpc(request) : await rawRpc(anvil.url, request)
    // anvil over WebSocket answers a method it lacks as it answers params it cannot read (-32602);
    // the node is then asked over HTTP, and its -32601 there is the answer (docs/upstream-selection.md).
    if (label === 'ws' && /"code":-32602,"message":"data did not match any variant/.test(expected)) {
      const overHttp = await rawRpc(anvil.url, `{"jsonrpc":"2.0","id":${idJson},"method":"${method}","params":[]}`)
      if (/"code":-32601/.test(overHttp)) expected = overHttp
    }
    const reply = await pool.call({ kind: 'archive', method, params, idJson, timeoutMs: 5_000 })
    t.equal(reply.text, expected, `${method} over ${label}`)
    const answer = JSON.parse(reply.text)
    t.equal(reply.isError, answer.error !== undefined, `${method} over ${label}: isError`)
    if (!NOT_ON_ANVIL.has(method)) t.ok('result' in answer, `${method} has a result`)
  }
}

t.test('read methods of the table', async (t) => {
  const signed = await direct('eth_signTransaction', [{ from, to, value: '0x1', nonce: '0x50', gas: '0x5208', gasPrice: '0x77359400' }])
  const calls: [string, unknown[]][] = [
    ['eth_blockNumber', []],
    ['eth_getBalance', [to, 'latest']],
    ['eth_call', [{ to: contract, data: '0x' }, 'latest']],
    ['eth_getTransactionByHash', [transferHash]],
    ['eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', address: contract }]],
    ['eth_getBlockByNumber', [block.number, true]],
    ['eth_getBlockByHash', [block.hash, false]],
    ['eth_getTransactionReceipt', [deployHash]],
    ['eth_getCode', [contract, 'latest']],
    ['eth_estimateGas', [{ from, to, value: '0x1' }, 'latest']],
    ['eth_gasPrice', []],
    ['eth_getStorageAt', [contract, '0x0', 'latest']],
    ['eth_getTransactionCount', [from, 'latest']],
    ['eth_getBlockReceipts', [deploy.blockNumber]],
    ['net_version', []],
    ['net_listening', []],
    ['net_peerCount', []],
    ['web3_clientVersion', []],
    ['web3_sha3', ['0x68656c6c6f']],
    ['debug_traceTransaction', [deployHash, {}]],
    ['debug_traceCall', [{ to: contract, data: '0x' }, 'latest', {}]],
    ['debug_traceBlockByNumber', [deploy.blockNumber, {}]],
    ['debug_traceBlockByHash', [deploy.blockHash, {}]],
    ['trace_transaction', [transferHash]],
    ['trace_get', [transferHash, ['0x0']]],
    ['trace_block', [block.number]],
    ['trace_filter', [{ fromBlock: '0x0', toBlock: block.number }]],
    ['trace_call', [{ to: contract, data: '0x' }, ['trace'], 'latest']],
    ['trace_rawTransaction', [signed, ['trace']]],
  ]
  for (const [method, params] of calls) await sameAsDirect(t, method, params)
  t.equal(
    JSON.parse((await pools.ws.call({ kind: 'archive', method: 'eth_call', params: [{ to: contract }, 'latest'], idJson: '1', timeoutMs: 5_000 })).text).result,
    '0x' + '0'.repeat(62) + '2a',
    'the contract answers 42',
  )
})

t.test('txpool methods with a pending transaction', async (t) => {
  await direct('evm_setAutomine', [false])
  const pendingHash = await direct('eth_sendTransaction', [{ from, to, value: '0x7' }])
  for (const method of ['txpool_content', 'txpool_status', 'txpool_inspect']) await sameAsDirect(t, method, [])
  await sameAsDirect(t, 'eth_getTransactionByHash', [pendingHash])
  const status = await direct('txpool_status')
  t.equal(status.pending, '0x1', 'one transaction was pending while compared')
  await direct('evm_mine')
  await direct('evm_setAutomine', [true])
})

t.test('eth_sendRawTransaction over each transport', async (t) => {
  for (const [label, pool] of Object.entries(pools)) {
    const nonce = await direct('eth_getTransactionCount', [from, 'pending'])
    const raw = await direct('eth_signTransaction', [{ from, to, value: '0x2', nonce, gas: '0x5208', gasPrice: '0x77359400' }])
    const reply = await pool.call({ kind: 'archive', method: 'eth_sendRawTransaction', params: [raw], idJson: '"raw"', timeoutMs: 5_000 })
    const answer = JSON.parse(reply.text)
    t.equal(answer.id, 'raw')
    t.equal(answer.result, await direct('web3_sha3', [raw]), `${label}: the hash of the signed transaction`)
    // anvil answers the hash before its automine has produced the block: wait for it (bounded).
    let receipt: any = null
    await until(async () => (receipt = await direct('eth_getTransactionReceipt', [answer.result])) !== null)
    t.equal(receipt?.status, '0x1', `${label}: mined`)
  }
})

t.test('the WebSocket node carried every call over its socket', async (t) => {
  t.ok(wsNode.counters.wsCalls > 30)
  t.equal(wsNode.counters.httpCalls, 0)
  t.equal(httpNode.counters.wsCalls, 0)
  t.equal(wsNode.counters.failures + httpNode.counters.failures, 0)
})
