import t from 'tap'
import WebSocket from 'ws'
import { startAnvils } from '../helpers/anvil-gateway.js'
import { startCountingProxy } from '../helpers/counting-proxy.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { oneNetwork, rpc, startTestGateway } from '../helpers/gateway.js'
import { waitFor } from '../helpers/eventually.js'
import { revertingCode } from '../helpers/contracts.js'
import { highestHead } from '../../src/upstream/node-choice.js'

// What a node lacks is learned from its own "method not found" code, never from words a tenant can
// put in an answer (issue 38, item 2). Before: an eth_call whose code reverted with the reason
// "method not found" set eth_call aside on the nodes at the head, and every other tenant's eth_call
// went to the node behind; 1,024 made-up names filled each node's memory so that a real gap was not
// remembered; anvil over WebSocket, which answers an unknown method with -32602, was never learned.

const call = (method: string, params: unknown[] = [], id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params })

t.test("a tenant's revert saying 'method not found' sets nothing aside: other tenants stay at the head", async (t) => {
  const [h1, h2, behind] = await startAnvils(t, {}, {}, {})
  // Two nodes at block 2, one at block 1.
  await Promise.all([h1!.rpc('anvil_mine', ['0x2']), h2!.rpc('anvil_mine', ['0x2']), behind!.rpc('anvil_mine', ['0x1'])])
  // A contract that reverts with those words, at the head only (the node behind has no code there
  // yet, and answers "0x": it serves eth_call, as the node behind did).
  const REVERTS = '0x00000000000000000000000000000000000000aa'
  for (const node of [h1!, h2!]) await node.rpc('anvil_setCode', [REVERTS, revertingCode('method not found')])
  const [c1, c2, cb] = await Promise.all([h1!, h2!, behind!].map((a) => startCountingProxy(a)))
  t.teardown(() => Promise.all([c1!.close(), c2!.close(), cb!.close()]))
  const tg = await startTestGateway(t, {
    networks: oneNetwork([
      { url: c1!.url, name: 'h1' },
      { url: c2!.url, name: 'h2' },
      { url: cb!.url, name: 'behind' },
    ]),
  })
  const pool = tg.gateway.upstreams.pool('eth-1')!
  await waitFor(() => pool.nodes().every((n) => n.head !== undefined) && highestHead(pool.nodes()) === 2, 'every head known')
  const [mallory, alice] = await Promise.all([tg.createKey('tier-3'), tg.createKey('tier-3')])

  const revert = await rpc(tg.url('eth-1'), call('eth_call', [{ to: REVERTS }, 'latest']), { apiKey: mallory.apiKey })
  t.equal(revert.json.error?.code, 3, "mallory gets the node's revert, from a node at the head")
  t.match(revert.json.error?.message, /execution reverted: method not found/)
  t.same(
    pool.nodes().map((n) => n.lacking.size),
    [0, 0, 0],
    'nothing set aside on any node',
  )

  const before = { head: c1!.count('eth_call') + c2!.count('eth_call'), behind: cb!.count('eth_call') }
  for (let i = 0; i < 12; i++) {
    const r = await rpc(tg.url('eth-1'), call('eth_call', [{ to: '0x00000000000000000000000000000000000000bb', data: `0x0${i.toString(16)}` }, 'latest']), {
      apiKey: alice.apiKey,
    })
    t.equal(r.json.result, '0x', `alice's call ${i} answered`)
  }
  t.equal(cb!.count('eth_call') - before.behind, 0, "none of alice's 12 calls reached the node behind")
  t.equal(c1!.count('eth_call') + c2!.count('eth_call') - before.head, 12, 'all 12 went to the nodes at the head')
})

t.test('made-up method names do not crowd out a real gap', async (t) => {
  const [anvil] = await startAnvils(t, {})
  const noDebug = await startFaultProxy(anvil!)
  const full = await startCountingProxy(anvil!)
  t.teardown(() => Promise.all([noDebug.close(), full.close()]))
  noDebug.set('debug_*', { refuse: true })
  const tg = await startTestGateway(t, {
    networks: oneNetwork([
      { url: noDebug.url, name: 'no-debug' },
      { url: full.url, name: 'full' },
    ]),
  })
  const { apiKey } = await tg.createKey('tier-3')
  // More made-up names than the 1,024 places each node had, each answered "not found" by both nodes.
  const JUNK = 1_100
  for (let from = 0; from < JUNK; from += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, i) => rpc(tg.url('eth-1'), call(`debug_madeUp${from + i}`), { apiKey })))
  }
  const pool = tg.gateway.upstreams.pool('eth-1')!
  t.same(
    pool.nodes().map((n) => n.lacking.size),
    [0, 0],
    'no made-up name remembered',
  )

  const [from] = (await anvil!.rpc('eth_accounts')).result
  const tx = (await anvil!.rpc('eth_sendTransaction', [{ from, to: from, value: '0x1' }])).result
  for (let i = 0; i < 10; i++) {
    const r = await rpc(tg.url('eth-1'), call('debug_traceTransaction', [tx], i), { apiKey })
    t.ok(r.json.result !== undefined, `trace ${i} served`)
  }
  t.ok(
    noDebug.received('debug_traceTransaction') <= 1,
    `the node without debug_ was asked ${noDebug.received('debug_traceTransaction')} time(s), then set aside`,
  )
  t.equal(
    pool
      .nodes()
      .find((n) => n.name === 'no-debug')!
      .lacking.has('debug_traceTransaction'),
    true,
    'debug_traceTransaction is set aside on it',
  )
})

t.test('anvil over WebSocket: an unknown method is learned too', async (t) => {
  // net_peerCount is in the method table and anvil has none. Over WebSocket anvil answers it with
  // -32602 "data did not match any variant…", as it answers a known method with params it cannot read.
  const [overWs, overHttp] = await startAnvils(t, {}, {})
  const counted = await startCountingProxy(overHttp!)
  t.teardown(() => counted.close())
  const direct = await new Promise<string>((resolve, reject) => {
    const ws = new WebSocket(overWs!.wsUrl)
    ws.on('open', () => ws.send(JSON.stringify(call('net_peerCount'))))
    ws.on('message', (m) => {
      resolve(String(m))
      ws.close()
    })
    ws.on('error', reject)
  })
  t.match(JSON.parse(direct).error, { code: -32602, message: 'data did not match any variant of untagged enum EthRpcCall' }, "anvil's own WebSocket answer")
  const tg = await startTestGateway(t, {
    networks: oneNetwork([
      { url: overWs!.url, ws: overWs!.wsUrl, name: 'ws' },
      { url: counted.url, name: 'http' },
    ]),
  })
  t.ok(await tg.gateway.upstreams.waitForSockets(10_000), 'the WebSocket to the node is open')
  const { apiKey } = await tg.createKey('tier-3')
  const wsNode = tg.gateway.upstreams
    .pool('eth-1')!
    .nodes()
    .find((n) => n.name === 'ws')!
  const wsCalls = wsNode.counters.wsCalls

  const first = await rpc(tg.url('eth-1'), call('net_peerCount'), { apiKey })
  t.equal(first.json.error?.code, -32601, "the client gets a node's -32601, not the WebSocket's -32602")
  t.ok(wsNode.counters.wsCalls > wsCalls, 'the node over WebSocket was asked over its WebSocket')
  // Both nodes said so: no node of the network serves it, and the next calls ask none.
  const asked = counted.count('net_peerCount')
  for (let i = 0; i < 3; i++) {
    const again = await rpc(tg.url('eth-1'), call('net_peerCount', [], i), { apiKey })
    t.equal(again.json.error?.code, -32601)
    t.match(again.json.error?.message, /no full node of eth-1 serves net_peerCount/)
  }
  t.equal(counted.count('net_peerCount'), asked, 'no node asked again')
  // A known method with params anvil cannot read is not "missing": the client gets the node's own answer.
  const bad = await rpc(tg.url('eth-1'), call('eth_getBalance', ['0x00', 'latest']), { apiKey })
  t.equal(bad.json.error?.code, -32602, 'bad params: the node says so')
  t.same(
    tg.gateway.upstreams
      .pool('eth-1')!
      .nodes()
      .map((n) => n.lacking.has('eth_getBalance')),
    [false, false],
    'and eth_getBalance is set aside nowhere',
  )
})
