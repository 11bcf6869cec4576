import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { startTestGateway } from '../helpers/gateway.js'
import { connectWs } from '../helpers/ws-client.js'

// Whose fault an error is comes from where it arose. A node's own -32700 or -32602 is the node's
// dialect, not the client's malformed message: Ganache answers -32700 for "header not found", an
// unknown filter or a bad transaction, and geth-like nodes -32602 for params they read otherwise.
// Only the gateway's own parse of the client's message counts toward the WebSocket penalty.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const proxy = await startFaultProxy(anvil)
t.teardown(() => proxy.close())
const tg = await startTestGateway(t, { networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: proxy.url, kind: 'full' }] } } })
const { apiKey } = await tg.createKey('tier-3')
const wsUrl = `${tg.wsUrl('eth-1')}?apikey=${apiKey}`
const call = (id: unknown, method: string, params: unknown[] = []) => ({ jsonrpc: '2.0', id, method, params })

t.test("a node's protocol error codes, 25 times over (more than ws.badMessages): no penalty", async (t) => {
  t.teardown(() => proxy.clear())
  const ws = await connectWs(wsUrl)
  t.teardown(() => ws.close())
  // -32601 is left out: a node's -32601 is read as the method missing there (method-missing.ts).
  const codes = [-32700, -32600, -32602]
  for (let i = 0; i < 25; i++) {
    const code = codes[i % codes.length]!
    proxy.set('eth_getBalance', { answerError: { code, message: 'header not found' } })
    const r = await ws.call(call(i, 'eth_getBalance', ['0x0000000000000000000000000000000000000001', '0x3e8']))
    t.same(r.error, { code, message: 'header not found' }, `call ${i}: the node's own error, as it answered it`)
  }
  const after = await ws.call(call('after', 'eth_chainId'))
  t.equal(after.result, '0x7a69', 'the key is still served: the node, not the client, said those')
  const batch = await ws.call([call('a', 'eth_getBalance', ['0x0000000000000000000000000000000000000001', '0x3e8']), call('b', 'eth_chainId')])
  t.equal(batch.find((x: any) => x.id === 'b').result, '0x7a69', 'in a batch too')
})

t.test("the gateway's own parse still counts: 21 unparsable messages bring the penalty", async (t) => {
  const { apiKey } = await tg.createKey('tier-3')
  const ws = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${apiKey}`)
  t.teardown(() => ws.close())
  for (let i = 0; i < 21; i++) t.equal((await ws.call('{not json')).error.code, -32700)
  t.equal((await ws.call(call('refused', 'eth_chainId'))).error.code, -32032, 'penalised')
})
