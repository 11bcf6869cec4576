import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startCountingProxy } from '../helpers/counting-proxy.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { connectWs } from '../helpers/ws-client.js'
import { NODE_OPERATING_METHODS } from '../../src/rpc/node-operating-methods.js'

// Issue 38, item 1: every method of the list of node-operating methods of geth, Nethermind, Besu,
// Erigon and reth, sent through a real gateway with debug and trace served (a full and an archive
// node: a real anvil behind a counting proxy), over HTTP and over WebSocket: each is refused with
// -32601 and the reason, and none reaches a node, even where the network's forwardMethods opens
// every served namespace with a pattern. On main 21 of 21 names the issue tried reached the node.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const proxy = await startCountingProxy(anvil)
t.teardown(() => proxy.close())
const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: 31337,
      upstreams: [
        { url: proxy.url, kind: 'full', name: 'full' },
        { url: proxy.url, kind: 'archive', name: 'archive' },
      ],
      forwardMethods: ['eth_*', 'net_*', 'web3_*', 'txpool_*', 'debug_*', 'trace_*'],
    },
  },
})
const { apiKey } = await tg.createKey('tier-3')
const NAMES = Object.keys(NODE_OPERATING_METHODS)
const call = (method: string, id: number) => ({ jsonrpc: '2.0', id, method, params: [] })

t.test('over HTTP: each refused with -32601 and the reason, none at a node', async (t) => {
  for (const [i, method] of NAMES.entries()) {
    const r = await rpc(tg.url('eth-1'), call(method, i), { apiKey })
    t.equal(r.status, 200, method)
    t.equal(r.json.error?.code, -32601, method)
    t.match(r.json.error?.message, new RegExp(`^Method not found: ${method} is not available through this gateway: it `), method)
  }
  const batch = await rpc(
    tg.url('eth-1'),
    NAMES.map((m, i) => call(m, i)),
    { apiKey },
  )
  t.same(
    batch.json.map((a: any) => a.error?.code),
    NAMES.map(() => -32601),
    'in one batch too',
  )
  t.same(
    NAMES.filter((m) => proxy.count(m) > 0),
    [],
    'none reached a node',
  )
})

t.test('over WebSocket: each refused with -32601 and the reason, none at a node', async (t) => {
  const ws = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${apiKey}`)
  t.teardown(() => ws.close())
  // One message: each refusal is an unsupported call for the WebSocket penalty, which a message
  // a name would pass (20 tolerated).
  const answers = await ws.call(NAMES.map((m, i) => call(m, i)))
  for (const [i, method] of NAMES.entries()) {
    t.equal(answers[i].error?.code, -32601, method)
    t.match(answers[i].error?.message, /is not available through this gateway: it /, method)
  }
  t.same(
    NAMES.filter((m) => proxy.count(m) > 0),
    [],
    'none reached a node',
  )
})

t.test('what the patterns allow and the list does not name does reach the node (the count sees it)', async (t) => {
  const before = proxy.count('debug_codeByHash')
  const r = await rpc(tg.url('eth-1'), call('debug_codeByHash', 1), { apiKey })
  t.ok(r.json.error !== undefined || r.json.result !== undefined, 'answered')
  t.equal(proxy.count('debug_codeByHash'), before + 1, 'forwarded once')
})
