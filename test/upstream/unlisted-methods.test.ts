import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'

// Issue 32, item 6: a method outside the method table, in a namespace the gateway serves, goes to
// the nodes (cautiously: not cached, not shared in flight, not hedged) instead of -32601; the
// namespaces that operate or change a node stay refused with the reason. On main,
// eth_getAccountInfo (Foundry's forks use it) got the gateway's own -32601.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
// The proxy only counts here: it is how the test sees what reached the node.
const proxy = await startFaultProxy(anvil)
t.teardown(() => proxy.close())
const tg = await startTestGateway(t, {
  networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: proxy.url, kind: 'full' }] } },
  config: { hedge: { enabled: true, minDelayMs: 1, maxDelayMs: 5 } },
})
const { apiKey } = await tg.createKey('tier-3')
const url = tg.url('eth-1')
const who = '0x70997970c51812dc3a010c7d01b50e68d4dc79c8'
const call = (method: string, params: unknown[] = [], id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params })

t.test('eth_getAccountInfo is answered by the node: its answer, with the client’s id', async (t) => {
  const direct = await anvil.rpc('eth_getAccountInfo', [who, 'latest'])
  t.ok(direct.result, 'anvil serves it')
  const r = await rpc(url, call('eth_getAccountInfo', [who, 'latest'], 'acct'), { apiKey })
  t.equal(r.status, 200)
  t.same(r.json, { ...direct, id: 'acct' })
  const config = await rpc(url, call('eth_config', [], 2), { apiKey })
  t.same(config.json, { ...(await anvil.rpc('eth_config')), id: 2 }, 'eth_config too')
})

t.test("a method the node does not have gets the node's own -32601", async (t) => {
  const before = proxy.forwarded('eth_doesNotExist')
  const direct = await anvil.rpc('eth_doesNotExist')
  const r = await rpc(url, call('eth_doesNotExist', [], 7), { apiKey })
  t.same(r.json, { ...direct, id: 7 }, "anvil's answer")
  t.equal(proxy.forwarded('eth_doesNotExist'), before + 1, 'the node was asked')
  const inBatch = await rpc(url, [call('eth_chainId', [], 'a'), call('eth_getAccountInfo', [who, 'latest'], 'b'), call('eth_baseFee', [], 'c')], { apiKey })
  t.same(
    inBatch.json.map((a: any) => a.id),
    ['a', 'b', 'c'],
  )
  t.same(inBatch.json[1].result, (await anvil.rpc('eth_getAccountInfo', [who, 'latest'])).result)
  t.same(inBatch.json[2].error, (await anvil.rpc('eth_baseFee')).error, 'the node says what it lacks')
})

t.test('identical unlisted calls at once each reach the node (not shared, not cached)', async (t) => {
  t.teardown(() => proxy.clear())
  // Slow enough that the calls overlap: shared in flight, the node would see one.
  proxy.set('eth_getAccountInfo', { delayMs: 300 })
  const before = proxy.forwarded('eth_getAccountInfo')
  const answers = await Promise.all([1, 2, 3].map((id) => rpc(url, call('eth_getAccountInfo', [who, '0x0'], id), { apiKey })))
  t.ok(
    answers.every((a, i) => a.json.id === i + 1 && a.json.result !== undefined),
    'each answered with its own id',
  )
  t.equal(proxy.forwarded('eth_getAccountInfo'), before + 3, 'three calls, three at the node')
  await rpc(url, call('eth_getAccountInfo', [who, '0x0'], 4), { apiKey })
  t.equal(proxy.forwarded('eth_getAccountInfo'), before + 4, 'a block-0 read is not served from the cache')
})

t.test('namespaces and methods that operate or change the node stay refused, with the reason', async (t) => {
  const refused = [
    ['anvil_mine', /anvil_\* methods are not available through this gateway: the namespace controls a development node/],
    ['evm_snapshot', /development node/],
    ['admin_addPeer', /administers the node/],
    ['personal_unlockAccount', /node’s own accounts/],
    ['miner_setEtherbase', /mining/],
    ['engine_newPayloadV4', /consensus client/],
    ['parity_setMode', /administers the node/],
    ['debug_setHead', /settings/],
    ['debug_startCPUProfile', /profiling/],
    ['debug_writeMemProfile', /disk/],
    ['debug_chaindbCompact', /database/],
    ['eth_signTypedData_v9', /sign locally/],
  ] as const
  for (const [method, why] of refused) {
    const r = await rpc(url, call(method), { apiKey })
    t.equal(r.json.error?.code, -32601, method)
    t.match(r.json.error?.message, why, method)
  }
  const trace = await rpc(url, call('trace_somethingNew', []), { apiKey })
  t.match(trace.json.error, { code: -32601, message: /needs an archive node/ }, 'trace_ is archive only')
  const odd = await rpc(url, call('eth_get"Balance', []), { apiKey })
  t.match(odd.json.error, { code: -32601, message: /is not a method name/ }, 'a name no node has')
  // The node is asked other things meanwhile (the head monitor's polls): count these methods only.
  const reached = [...refused.map(([m]) => m), 'trace_somethingNew', 'eth_get"Balance'].filter((m) => proxy.received(m) > 0)
  t.same(reached, [], 'none of them reached the node')
})
