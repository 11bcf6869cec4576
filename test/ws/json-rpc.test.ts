import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { connectWs, tryUpgrade } from '../helpers/ws-client.js'
import { generateApiKey } from '../../src/keys/api-key.js'

// JSON-RPC over /ws/<network>: the key at the upgrade, every method as over HTTP, batches, and
// ids echoed exactly.
const {
  tg,
  key: { apiKey },
  wsUrl,
} = await anvilGateway(t, { plan: 'free-trial' })

t.test('a missing, malformed or unknown key is refused at the upgrade with 401', async (t) => {
  const missing = await tryUpgrade(wsUrl)
  t.equal(missing.status, 401)
  t.equal(missing.body.error.code, -32001)
  t.match(missing.body.error.message, /apikey=.*Bearer/)
  t.equal((await tryUpgrade(`${wsUrl}?apikey=tg_nope`)).status, 401)
  t.equal((await tryUpgrade(`${wsUrl}?apikey=${generateApiKey().key}`)).status, 401)
  t.equal((await tryUpgrade(`${tg.gateway.ws}/ws/nope-1?apikey=${apiKey}`)).status, 404, 'unknown network')
  t.equal((await tryUpgrade(`${wsUrl}?apikey=${apiKey}`)).status, 101)
})

t.test('the key also works as Authorization: Bearer on the upgrade', async (t) => {
  const ws = await connectWs(wsUrl, { headers: { Authorization: `Bearer ${apiKey}` } })
  t.teardown(() => ws.close())
  const answer = await ws.call({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] })
  t.same(answer, { jsonrpc: '2.0', id: 1, result: '0x7a69' })
})

t.test('calls and batches over one connection, ids echoed exactly', async (t) => {
  const ws = await connectWs(`${wsUrl}?apikey=${apiKey}`)
  t.teardown(() => ws.close())
  for (const id of [7, 'abc', null, 1.5, '🙂', 2 ** 53 - 1]) {
    const answer = await ws.call({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] })
    t.same(answer, { jsonrpc: '2.0', id, result: '0x7a69' }, `id ${JSON.stringify(id)}`)
  }
  const batch = await ws.call([
    { jsonrpc: '2.0', id: 'a', method: 'eth_blockNumber', params: [] },
    { jsonrpc: '2.0', id: 'b', method: 'net_version', params: [] },
    { jsonrpc: '2.0', id: 'c', method: 'admin_peers', params: [] },
    { jsonrpc: '1.0', id: 'd', method: 'eth_chainId', params: [] },
  ])
  t.same(
    batch.map((r: any) => r.id),
    ['a', 'b', 'c', 'd'],
    'answers in request order',
  )
  t.match(batch[0].result, /^0x/)
  t.equal(batch[1].result, '31337')
  t.equal(batch[2].error.code, -32601)
  t.equal(batch[3].error.code, -32600)
})

t.test('the same method policy as HTTP; eth_subscribe is allowed here', async (t) => {
  const ws = await connectWs(`${wsUrl}?apikey=${apiKey}`)
  t.teardown(() => ws.close())
  const sign = await ws.call({ jsonrpc: '2.0', id: 1, method: 'eth_sendTransaction', params: [{}] })
  t.equal(sign.error.code, -32601)
  const trace = await ws.call({ jsonrpc: '2.0', id: 2, method: 'trace_block', params: ['latest'] })
  t.equal(trace.error.code, -32601)
  t.match(trace.error.message, /archive/, 'the Free Trial has no archive node')
  const sub = await ws.call({ jsonrpc: '2.0', id: 3, method: 'eth_subscribe', params: ['newHeads'] })
  t.match(sub.result, /^0x[0-9a-f]{32}$/)
  const bad = await ws.call({ jsonrpc: '2.0', id: 4, method: 'eth_subscribe', params: ['syncing'] })
  t.equal(bad.error.code, -32602)
  t.match(bad.error.message, /newHeads.*logs.*newPendingTransactions/)
})

t.test('protocol errors: not JSON, an empty batch', async (t) => {
  const ws = await connectWs(`${wsUrl}?apikey=${apiKey}`)
  t.teardown(() => ws.close())
  const notJson = await ws.call('{"jsonrpc":"2.0","id":1,')
  t.equal(notJson.error.code, -32700)
  t.equal(notJson.id, null)
  const empty = await ws.call('[]')
  t.equal(empty.error.code, -32600)
})

t.test('the node answers errors as it says them', async (t) => {
  const ws = await connectWs(`${wsUrl}?apikey=${apiKey}`)
  t.teardown(() => ws.close())
  const answer = await ws.call({ jsonrpc: '2.0', id: 9, method: 'eth_getBalance', params: ['0x1234'] })
  t.equal(answer.id, 9)
  t.ok(answer.error, 'an error from the node')
})
