import t from 'tap'
import { receiptOf, startAnvil } from '../../harness/anvil.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { wsRpc } from '../helpers/ws-rpc.js'

// Every method of the spec's table goes through the gateway and answers what anvil answers
// directly (result or error alike): the gateway is transparent but for the id.
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
// eth-1 reaches the node over HTTP, ws-1 over its WebSocket (multiplexed, ids rewritten).
const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: 31337,
      upstreams: [
        { url: anvil.url, kind: 'full' },
        { url: anvil.url, kind: 'archive' },
      ],
    },
    // State reads proven against the node's own headers (docs/verified-answers.md): the same answers.
    'verified-1': {
      chainId: 31337,
      verify: 'reads',
      upstreams: [
        { url: anvil.url, kind: 'full' },
        { url: anvil.url, kind: 'archive' },
      ],
    },
    'ws-1': {
      chainId: 31337,
      upstreams: [
        { url: anvil.url, ws: anvil.wsUrl, kind: 'full' },
        { url: anvil.url, ws: anvil.wsUrl, kind: 'archive' },
      ],
    },
  },
})
const { apiKey } = await tg.createKey('tier-3')
const url = tg.url('eth-1')

const from = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266'
const to = '0x70997970c51812dc3a010c7d01b50e68d4dc79c8'
const sent = await anvil.rpc('eth_sendTransaction', [{ from, to, value: '0x1000' }])
const txHash: string = sent.result
const receipt = await receiptOf(anvil, txHash)
const blockHash: string = receipt.blockHash
const blockNumber: string = receipt.blockNumber
const nonce = (await anvil.rpc('eth_getTransactionCount', [from, 'latest'])).result
const signed = await anvil.rpc('eth_signTransaction', [{ from, to, value: '0x2000', nonce, gas: '0x5208', gasPrice: '0x77359400' }])
const rawTx: string = signed.result
t.match(rawTx, /^0x/, 'anvil signed a transaction to send raw')
const callObject = { from, to, data: '0x' }

const table: Array<[string, unknown[]]> = [
  ['eth_blockNumber', []],
  ['eth_getBalance', [to, 'latest']],
  ['eth_call', [callObject, 'latest']],
  ['eth_getTransactionByHash', [txHash]],
  ['eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }]],
  ['eth_getBlockByNumber', [blockNumber, true]],
  ['eth_getBlockByHash', [blockHash, false]],
  ['eth_getTransactionReceipt', [txHash]],
  ['eth_getCode', [to, 'latest']],
  ['eth_estimateGas', [{ from, to, value: '0x1' }, 'latest']],
  ['eth_gasPrice', []],
  ['eth_getStorageAt', [to, '0x0', 'latest']],
  ['eth_getTransactionCount', [from, 'latest']],
  ['eth_getBlockReceipts', [blockNumber]],
  ['net_version', []],
  ['net_listening', []],
  ['net_peerCount', []],
  ['web3_clientVersion', []],
  ['web3_sha3', ['0x68656c6c6f']],
  ['txpool_content', []],
  ['txpool_status', []],
  ['txpool_inspect', []],
  ['debug_traceTransaction', [txHash, {}]],
  ['debug_traceCall', [callObject, 'latest', {}]],
  ['debug_traceBlockByNumber', [blockNumber, {}]],
  ['debug_traceBlockByHash', [blockHash, {}]],
  ['trace_transaction', [txHash]],
  ['trace_get', [txHash, ['0x0']]],
  ['trace_block', [blockNumber]],
  ['trace_filter', [{ fromBlock: blockNumber, toBlock: blockNumber }]],
  ['trace_call', [callObject, ['trace'], 'latest']],
  ['trace_rawTransaction', [rawTx, ['trace']]],
]

let id = 100
for (const [network, transport] of [
  ['eth-1', 'http'],
  ['ws-1', 'ws'],
  ['verified-1', 'http'],
] as const) {
  for (const [method, params] of table) {
    t.test(`${method} over ${transport}${network === 'verified-1' ? ', verified' : ''}`, async (t) => {
      let direct = transport === 'http' ? await anvil.rpc(method, params) : await wsRpc(anvil.wsUrl, { jsonrpc: '2.0', id: 1, method, params })
      // anvil over WebSocket answers a method it lacks as it answers params it cannot read
      // (-32602, "data did not match any variant"); the gateway asks the node over HTTP then, and
      // passes on what it says there (docs/upstream-selection.md): that is the node's answer.
      if (transport === 'ws' && direct.error?.code === -32602 && /did not match any variant/.test(direct.error.message)) {
        const overHttp = await anvil.rpc(method, [])
        if (overHttp.error?.code === -32601) direct = overHttp
      }
      const myId = id++
      const via = await rpc(tg.url(network), { jsonrpc: '2.0', id: myId, method, params }, { apiKey })
      t.equal(via.status, 200)
      t.equal(via.json.id, myId, 'the id is the client’s')
      delete direct.id
      delete via.json.id
      t.same(via.json, direct, 'same answer as the node directly')
    })
  }
}

t.test('eth_sendRawTransaction returns the hash and the node has the transaction', async (t) => {
  const via = await rpc(url, { jsonrpc: '2.0', id: 'raw', method: 'eth_sendRawTransaction', params: [rawTx] }, { apiKey })
  t.equal(via.status, 200)
  t.match(via.json.result, /^0x[0-9a-f]{64}$/)
  const tx = await anvil.rpc('eth_getTransactionByHash', [via.json.result])
  t.equal(tx.result.hash, via.json.result)
  t.equal(tx.result.value, '0x2000')
})

t.test('a batch of the whole table answers each call as the node does', async (t) => {
  const calls = table.slice(0, 22).map(([method, params], i) => ({ jsonrpc: '2.0', id: i, method, params }))
  const via = await rpc(url, calls, { apiKey })
  t.equal(via.status, 200)
  t.equal(via.json.length, calls.length)
  for (let i = 0; i < calls.length; i++) t.equal(via.json[i].id, i, `entry ${i} in order`)
  const direct = await anvil.rpc('eth_getBlockByHash', [blockHash, false])
  t.same(via.json[6].result, direct.result)
})
