import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { parseConfig } from '../../src/config/load.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'

// Methods outside the method table (issue 32, item 6; issue 38, item 1). They reach a node only
// where the network's forwardMethods allows them: elsewhere they get the gateway's -32601, which
// says so, without a node being asked. Forwarded, they go cautiously (not cached, not shared in
// flight, not hedged). The namespaces and methods that operate or change a node stay refused
// whatever a pattern says. On main, every unlisted name of a served namespace went to the nodes.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
// The proxy only counts here: it is how the test sees what reached the node.
const proxy = await startFaultProxy(anvil)
t.teardown(() => proxy.close())
const raw = {
  networks: {
    'eth-1': { chainId: 31337, upstreams: [{ url: proxy.url, kind: 'full' as const }] },
    'eth-2': {
      chainId: 31337,
      upstreams: [{ url: proxy.url, kind: 'full' as const }],
      forwardMethods: ['ots_*', 'eth_doesNotExist', 'eth_*', 'debug_*', 'trace_*', 'admin_*', 'anvil_*'],
    },
  },
  config: { hedge: { enabled: true, minDelayMs: 1, maxDelayMs: 5 } },
}
const tg = await startTestGateway(t, raw)
const { apiKey } = await tg.createKey('tier-3')
const closed = tg.url('eth-1')
const open = tg.url('eth-2')
const call = (method: string, params: unknown[] = [], id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params })
const notForwarded = (method: string) =>
  `Method not found: ${method} is not forwarded by this gateway (it is not in its method table, docs/costs.md); the operator may allow it on this network with forwardMethods`

t.test('without forwardMethods: the gateway’s -32601 that says why, and the node is not asked', async (t) => {
  for (const method of ['eth_doesNotExist', 'ots_getApiLevel', 'debug_dumpBlock', 'trace_somethingNew', 'eth_baseFeeNext']) {
    const before = proxy.received(method)
    const r = await rpc(closed, call(method, [], 7), { apiKey })
    t.same(r.json, { jsonrpc: '2.0', id: 7, error: { code: -32601, message: notForwarded(method) } }, method)
    t.equal(proxy.received(method), before, `${method}: no node asked`)
  }
  const inBatch = await rpc(closed, [call('eth_chainId', [], 'a'), call('ots_getApiLevel', [], 'b')], { apiKey })
  t.same(inBatch.json[0].result, '0x7a69')
  t.equal(inBatch.json[1].error.message, notForwarded('ots_getApiLevel'), 'in a batch, that call alone')
})

t.test('what forwardMethods allows is answered by the node: its answer, with the client’s id', async (t) => {
  const r = await rpc(open, call('ots_getApiLevel', [], 'lvl'), { apiKey })
  t.same(r.json, { ...(await anvil.rpc('ots_getApiLevel')), id: 'lvl' })
  const before = proxy.forwarded('eth_doesNotExist')
  const direct = await anvil.rpc('eth_doesNotExist')
  const missing = await rpc(open, call('eth_doesNotExist', [], 7), { apiKey })
  t.same(missing.json, { ...direct, id: 7 }, "a method the node lacks: the node's own -32601")
  t.equal(proxy.forwarded('eth_doesNotExist'), before + 1, 'the node was asked')
})

t.test('identical forwarded calls at once each reach the node (not shared, not cached)', async (t) => {
  t.teardown(() => proxy.clear())
  // Slow enough that the calls overlap: shared in flight, the node would see one.
  proxy.set('ots_getApiLevel', { delayMs: 300 })
  const before = proxy.forwarded('ots_getApiLevel')
  const answers = await Promise.all([1, 2, 3].map((id) => rpc(open, call('ots_getApiLevel', [], id), { apiKey })))
  t.ok(
    answers.every((a, i) => a.json.id === i + 1 && a.json.result !== undefined),
    'each answered with its own id',
  )
  t.equal(proxy.forwarded('ots_getApiLevel'), before + 3, 'three calls, three at the node')
})

t.test('a reload opens and closes a network’s forwardMethods from the next call', async (t) => {
  const reload = (forwardMethods: string[] | undefined) =>
    tg.gateway.reload(
      parseConfig({
        ...tg.config,
        networks: { ...raw.networks, 'eth-1': { ...raw.networks['eth-1'], ...(forwardMethods ? { forwardMethods } : {}) } },
      }),
    )
  t.teardown(() => reload(undefined))
  const outcome = reload(['ots_getApiLevel'])
  t.match(outcome, { applied: true, changes: { networks: ['networks.eth-1.forwardMethods'] } })
  t.equal((await rpc(closed, call('ots_getApiLevel'), { apiKey })).json.result, (await anvil.rpc('ots_getApiLevel')).result, 'forwarded now')
  reload(undefined)
  t.equal((await rpc(closed, call('ots_getApiLevel'), { apiKey })).json.error?.message, notForwarded('ots_getApiLevel'), 'refused again')
})

t.test('namespaces and methods that operate or change the node stay refused, whatever a pattern allows', async (t) => {
  const refused = [
    ['anvil_mine', /anvil_\* methods are not available through this gateway: the namespace controls a development node/],
    ['evm_snapshot', /development node/],
    ['admin_addPeer', /administers the node/],
    ['personal_unlockAccount', /node’s own accounts/],
    ['miner_setEtherbase', /mining/],
    ['engine_newPayloadV4', /consensus client/],
    ['parity_setMode', /administers the node/],
    ['debug_setHead', /chain or its sync/],
    ['debug_startCPUProfile', /profil/],
    ['debug_writeMemProfile', /profil/],
    ['debug_chaindbCompact', /database/],
    ['debug_resetHead', /chain or its sync/],
    ['eth_signTypedData_v9', /sign locally/],
    ['eth_sendTransaction', /eth_sendRawTransaction/],
  ] as const
  for (const [method, why] of refused) {
    const r = await rpc(open, call(method), { apiKey })
    t.equal(r.json.error?.code, -32601, method)
    t.match(r.json.error?.message, why, method)
  }
  const trace = await rpc(open, call('trace_somethingNew', []), { apiKey })
  t.match(trace.json.error, { code: -32601, message: /needs an archive node/ }, 'a forwarded trace_ method is archive only')
  const odd = await rpc(open, call('eth_get"Balance', []), { apiKey })
  t.match(odd.json.error, { code: -32601, message: /is not a method name/ }, 'a name no node has')
  // The node is asked other things meanwhile (the head monitor's polls): count these methods only.
  const reached = [...refused.map(([m]) => m), 'trace_somethingNew', 'eth_get"Balance'].filter((m) => proxy.received(m) > 0)
  t.same(reached, [], 'none of them reached the node')
})
