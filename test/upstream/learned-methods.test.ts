import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { oneNetwork, rpc, startTestGateway } from '../helpers/gateway.js'
import { until } from '../helpers/eventually.js'

// Two nodes of one chain (the same real anvil, once behind a proxy that refuses debug_* as a node
// without the debug namespace does). Before, 20 of 40 debug_traceTransaction failed with that
// node's -32601 although the other node serves them. Now the node's "method not found" sends the
// call to the other node, and the method is set aside on the node that lacks it
// (health.methodSetAsideMs; short here), then probed with one call.

const SET_ASIDE_MS = 1_000
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const partial = await startFaultProxy(anvil)
const bare = await startFaultProxy(anvil)
// The node that serves debug_ is the slower one: the node without it is the one chosen first.
const slower = await startFaultProxy(anvil)
t.teardown(() => Promise.all([partial.close(), bare.close(), slower.close()]))
partial.set('debug_*', { refuse: true })
bare.set('debug_*', { refuse: true })
slower.set('*', { delayMs: 30 })

async function gatewayOf(upstreams: Array<{ url: string; name: string }>) {
  const tg = await startTestGateway(t, {
    networks: oneNetwork(upstreams),
    config: { health: { methodSetAsideMs: SET_ASIDE_MS } },
  })
  const { apiKey } = await tg.createKey('tier-3')
  return (method: string, params: unknown[]) => rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: 1, method, params }, { apiKey })
}

const [from] = (await anvil.rpc('eth_accounts')).result
const tx = (await anvil.rpc('eth_sendTransaction', [{ from, to: from, value: '0x1' }])).result

t.test('a method one node lacks is served by the other, and set aside on the first', async (t) => {
  const call = await gatewayOf([
    { url: slower.url, name: 'full-node' },
    { url: partial.url, name: 'no-debug' },
  ])
  // Calls that measure both nodes, until the one without debug_ (the faster) is the one chosen:
  // what follows assumes it. A fixed 20 calls were not always enough: twice in about ten loaded
  // fresh-clone runs all 40 traces went to the other node and it was asked none (a slow first
  // measure, or a poll that failed under load and set it out for a while, would do that).
  let balance = 0
  const preferred = await until(async () => {
    const before = partial.received('eth_getBalance')
    for (let i = 0; i < 10; i++) await call('eth_getBalance', [`0x${(++balance).toString(16).padStart(40, '0')}`, 'latest'])
    return partial.received('eth_getBalance') - before >= 9
  }, 60_000)
  t.ok(preferred, 'the node without debug_ is the one chosen for ordinary calls')
  const started = Date.now()
  const answers = []
  for (let i = 0; i < 40; i++) answers.push((await call('debug_traceTransaction', [tx])).json)
  t.same(
    answers.filter((a) => a.error !== undefined),
    [],
    'all 40 traced',
  )
  // Once, then once more per set-aside time that passed (a loaded machine makes the 40 calls slower).
  const most = 1 + Math.ceil((Date.now() - started) / SET_ASIDE_MS)
  const asked = partial.received('debug_traceTransaction')
  t.ok(asked >= 1 && asked <= most, `the node without debug_ was asked ${asked} times (at least once, at most ${most}), then set aside`)
  // Past the set-aside time, one call probes it again (and is still served by the other node).
  let failed = 0
  const probed = await until(async () => {
    if ((await call('debug_traceTransaction', [tx])).json.error !== undefined) failed++
    return partial.received('debug_traceTransaction') > asked
  })
  t.ok(probed, 'asked again once the method was set aside long enough')
  t.equal(failed, 0, 'and every call meanwhile was served')
})

t.test('when every node lacks the method, the client gets the node’s answer', async (t) => {
  const call = await gatewayOf([
    { url: partial.url, name: 'a' },
    { url: bare.url, name: 'b' },
  ])
  const before = partial.received() + bare.received()
  const r = await call('debug_traceTransaction', [tx])
  t.equal(r.json.error.code, -32601, 'the node’s own -32601')
  t.match(r.json.error.message, /does not exist\/is not available/)
  t.ok(partial.received() + bare.received() - before <= 2, 'each node asked at most once')
})
