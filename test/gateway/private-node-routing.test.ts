import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc, TEST_SECRET } from '../helpers/gateway.js'
import { runCli, within } from '../helpers/cli.js'
import { connectWs } from '../helpers/ws-client.js'

// Private Node: on the shared nodes without a rate limit until the operator attaches a dedicated
// node; then its calls go there (the shared archive nodes still serve kinds it has no node of).
// The dedicated node is 50 blocks ahead, so eth_blockNumber (never cached) says which answered.
// The dedicated node is not in the gateway's config: the operator attaches it in the test.
const dedicated = await startAnvil({ chainId: 1 })
t.teardown(() => dedicated.stop())
await dedicated.rpc('anvil_mine', ['0x32'])
// The shared node serves the network's full and archive calls.
const { anvil: shared, tg, key: priv, url } = await anvilGateway(t, { anvil: { chainId: 1 }, archive: true, plan: 'private' })
const blockNumber = { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }
const other = await tg.createKey('tier-3')

t.test('a dedicated node serves the account once attached', async (t) => {
  t.equal((await rpc(url, blockNumber, { apiKey: priv.apiKey })).json.result, '0x0', 'the shared node before')
  const out = await runCli(
    ['nodes', 'attach', '--config', tg.configPath, '--account', priv.accountId, '--network', 'eth-1', '--url', dedicated.url, '--ws', dedicated.wsUrl],
    { TOLLGATE_SECRET: TEST_SECRET },
  )
  t.equal(out.code, 0, out.stderr)
  // The gateway learns of the attachment through its event log: bounded by 10 s so that the test
  // cannot hang; the time it took is reported, not asserted.
  const took = await within(10_000, async () => (await rpc(url, blockNumber, { apiKey: priv.apiKey })).json?.result === '0x32')
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
