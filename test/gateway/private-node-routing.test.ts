import t from 'tap'
import { startAnvil } from '../helpers/anvil.js'
import { rpc, startTestGateway, TEST_SECRET } from '../helpers/gateway.js'
import { runCli, within } from '../helpers/cli.js'
import { connectWs } from '../helpers/ws-client.js'

// Private Node: on the shared nodes without a rate limit until the operator attaches a dedicated
// node; then its calls go there (the shared archive nodes still serve kinds it has no node of).
// The dedicated node is 50 blocks ahead, so eth_blockNumber (never cached) says which answered.
const shared = await startAnvil({ chainId: 1 })
const dedicated = await startAnvil({ chainId: 1 })
t.teardown(async () => {
  await Promise.all([shared.stop(), dedicated.stop()])
})
await dedicated.rpc('anvil_mine', ['0x32'])
const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: 1,
      upstreams: [
        { url: shared.url, ws: shared.wsUrl, kind: 'full' },
        { url: shared.url, kind: 'archive' },
      ],
    },
  },
})
const url = tg.url('eth-1')
const blockNumber = { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }
const priv = await tg.createKey('private')
const other = await tg.createKey('tier-3')

t.test('a dedicated node serves the account once attached', async (t) => {
  t.equal((await rpc(url, blockNumber, { apiKey: priv.apiKey })).json.result, '0x0', 'the shared node before')
  const out = await runCli(
    ['nodes', 'attach', '--config', tg.configPath, '--account', priv.accountId, '--network', 'eth-1', '--url', dedicated.url, '--ws', dedicated.wsUrl],
    { TOLLGATE_SECRET: TEST_SECRET },
  )
  t.equal(out.code, 0, out.stderr)
  const took = await within(1000, async () => (await rpc(url, blockNumber, { apiKey: priv.apiKey })).json?.result === '0x32')
  t.ok(took !== undefined, `the dedicated node answers after ${took} ms`)
  t.equal((await rpc(url, blockNumber, { apiKey: other.apiKey })).json.result, '0x0', 'other accounts stay on the shared nodes')
  const trace = await rpc(url, { jsonrpc: '2.0', id: 2, method: 'trace_block', params: ['0x0'] }, { apiKey: priv.apiKey })
  t.same(trace.json.result, (await shared.rpc('trace_block', ['0x0'])).result, 'no dedicated archive node: the shared one serves trace_*')
})

t.test('its WebSocket calls and subscriptions go to the dedicated node too', async (t) => {
  // Before one admission served both transports, the WebSocket upgrade took the shared pool.
  const ws = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${priv.apiKey}`)
  t.teardown(() => ws.close())
  const otherWs = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${other.apiKey}`)
  t.teardown(() => otherWs.close())
  t.equal((await ws.call({ ...blockNumber, id: 3 })).result, '0x32', 'a call over WebSocket is answered by the dedicated node')
  t.equal((await otherWs.call({ ...blockNumber, id: 3 })).result, '0x0', 'another account over WebSocket stays on the shared node')
  const sub = (await ws.call({ jsonrpc: '2.0', id: 4, method: 'eth_subscribe', params: ['newHeads'] })).result
  const otherSub = (await otherWs.call({ jsonrpc: '2.0', id: 4, method: 'eth_subscribe', params: ['newHeads'] })).result
  t.type(sub, 'string')
  // Wait for the notification from before the block is mined: the gateway may relay it before
  // anvil's answer to anvil_mine reaches the test.
  const nextHead = ws.nextNotification(sub, 10_000)
  await dedicated.rpc('anvil_mine', ['0x1'])
  const head = await nextHead
  t.equal(head?.params?.result?.number, '0x33', "newHeads of the account's subscription come from the dedicated node")
  const nextOtherHead = otherWs.nextNotification(otherSub, 10_000)
  await shared.rpc('anvil_mine', ['0x1'])
  const otherHead = await nextOtherHead
  t.equal(otherHead?.params?.result?.number, '0x1', 'and the shared subscription from the shared node')
  t.same(
    ws.notifications(sub).map((n) => n.params.result.number),
    ['0x33'],
    "the shared node's block never reaches the account",
  )
})
