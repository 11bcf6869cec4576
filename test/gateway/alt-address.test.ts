import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { connectWs, tryUpgrade } from '../helpers/ws-client.js'
import { usageEventsOf } from '../helpers/usage-events.js'

// The spec's second address form: /http/<network>-http and /ws/<network>-ws are the network itself.
const { tg, key, url, anvil } = await anvilGateway(t, { usageIntervalMs: 200 })
const call = { jsonrpc: '2.0', id: 7, method: 'eth_chainId', params: [] }

t.test('/http/<network>-http answers exactly as /http/<network>', async (t) => {
  const plain = await rpc(url, call, { apiKey: key.apiKey })
  const alt = await rpc(tg.url('eth-1-http'), call, { apiKey: key.apiKey })
  t.equal(alt.status, 200)
  t.equal(alt.text, plain.text, 'the same bytes')
  t.equal(alt.json.result, `0x${(31337).toString(16)}`)
  // A write goes to the same node too: its block number moves on both addresses.
  const before = await rpc(url, { ...call, method: 'eth_blockNumber' }, { apiKey: key.apiKey })
  await anvil.rpc('evm_mine', [])
  const after = await rpc(tg.url('eth-1-http'), { ...call, method: 'eth_blockNumber' }, { apiKey: key.apiKey })
  t.equal(BigInt(after.json.result), BigInt(before.json.result) + 1n)
})

t.test('the suffix is only the transport it names, and only on a served network', async (t) => {
  const wsOnHttp = await rpc(tg.url('eth-1-ws'), call, { apiKey: key.apiKey })
  t.equal(wsOnHttp.status, 404, '-ws is not an HTTP address')
  t.match(wsOnHttp.json.error.message, /Unknown network "eth-1-ws"/)
  const unknown = await rpc(tg.url('bsc-1-http'), call, { apiKey: key.apiKey })
  t.equal(unknown.status, 404)
  t.match(unknown.json.error.message, /Unknown network "bsc-1-http"/, 'named as the client wrote it')
  const twice = await rpc(tg.url('eth-1-http-http'), call, { apiKey: key.apiKey })
  t.equal(twice.status, 404, 'one suffix, not any number')
  const noKey = await rpc(tg.url('eth-1-http'), call)
  t.equal(noKey.status, 401, 'the key is checked as on the network itself')
})

t.test('/ws/<network>-ws is the network over WebSocket', async (t) => {
  const ws = await connectWs(`${tg.wsUrl('eth-1-ws')}?apikey=${key.apiKey}`)
  t.teardown(() => ws.close())
  const answer = await ws.call(call)
  t.equal(answer.result, `0x${(31337).toString(16)}`)
  const sub = await ws.call({ jsonrpc: '2.0', id: 2, method: 'eth_subscribe', params: ['newHeads'] })
  t.match(sub.result, /^0x/)
  await anvil.rpc('evm_mine', [])
  // The block's notification may come before evm_mine's own answer: the first, whenever it came.
  const n = await ws.notificationAt(sub.result, 0, 30_000)
  t.ok(n?.params?.result?.number, 'a newHeads notification')
  const refused = await tryUpgrade(`${tg.wsUrl('eth-1-http')}?apikey=${key.apiKey}`)
  t.equal(refused.status, 404, '-http is not a WebSocket address')
})

t.test('usage is counted under the network slug', async (t) => {
  for (let i = 0; i < 3; i++) t.equal((await rpc(tg.url('eth-1-http'), call, { apiKey: key.apiKey })).status, 200)
  await tg.stop()
  const usage = await usageEventsOf(tg.config)
  t.same([...new Set(usage.map((e) => e.network))], ['eth-1'], 'no usage under eth-1-http or eth-1-ws')
  // 4 calls in the first test (none in the second: all refused), 2 over WebSocket, 3 here.
  t.equal(
    usage.reduce((n, e) => n + e.requests, 0),
    4 + 2 + 3,
    'every call served through the second address is in the usage of eth-1',
  )
})
