import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metric, until } from '../helpers/metrics.js'
import { openEventLog } from '../../src/events/open-log.js'
import type { UsageRecorded } from '../../src/events/types.js'

// Three real anvils of one chain (the same genesis time, no mining: identical state). In front of
// some of them a fault proxy alters eth_getBalance, as a node that lies would. Before consensus,
// every node got its turn: a third of the balances read were the liar's.
// Network eth-1: two honest nodes and one that adds 1 wei; it must never reach the client, and
// it sits out once it has answered against the others disputeThreshold times.
// Network pol-1: one honest node and two that lie differently: no two agree, and the client is
// told so (NODES_DISAGREE), never given one of the three.

const args = ['--no-mining', '--timestamp', '1700000000']
const [a, b, c] = await Promise.all([startAnvil({ args }), startAnvil({ args }), startAnvil({ args })])
t.teardown(() => Promise.all([a.stop(), b.stop(), c.stop()]))
const plusOne = await startFaultProxy(c)
const plusTwo = await startFaultProxy(b)
const plusThree = await startFaultProxy(c)
t.teardown(() => Promise.all([plusOne.close(), plusTwo.close(), plusThree.close()]))
const add = (n: bigint) => (r: unknown) => `0x${(BigInt(r as string) + n).toString(16)}`
plusOne.set('eth_getBalance', { alter: add(1n) })
plusTwo.set('eth_getBalance', { alter: add(2n) })
plusThree.set('eth_getBalance', { alter: add(3n) })
// A node that never answers a block read in time: the client must not wait for it.
const stuck = await startFaultProxy(a)
t.teardown(() => stuck.close())
stuck.set('eth_getBlockByNumber', { delayMs: 600_000 })

const THRESHOLD = 5
const consensus = { participants: 3, agreement: 2, disputeThreshold: THRESHOLD, sitOutMs: 3_600_000 }
const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: 31337,
      consensus,
      upstreams: [
        { url: a.url, name: 'honest-a', kind: 'full' },
        { url: b.url, name: 'honest-b', kind: 'full' },
        { url: plusOne.url, name: 'liar', kind: 'full' },
      ],
    },
    'pol-1': {
      chainId: 31337,
      consensus,
      upstreams: [
        { url: stuck.url, name: 'honest', kind: 'full' },
        { url: plusTwo.url, name: 'plus-two', kind: 'full' },
        { url: plusThree.url, name: 'plus-three', kind: 'full' },
      ],
    },
  },
  config: { diagnostics: { responseHeaders: true } },
})
const { apiKey, keyId } = await tg.createKey('tier-3')
const [who] = (await a.rpc('eth_accounts')).result as string[]
const truth = (await a.rpc('eth_getBalance', [who, 'latest'])).result as string
const balance = { jsonrpc: '2.0', id: 7, method: 'eth_getBalance', params: [who, 'latest'] }

t.test('a lying node never reaches the client, and sits out after the threshold', async (t) => {
  const answers: string[] = []
  const agreements = new Set<string>()
  for (let i = 0; i < 60; i++) {
    const res = await rpc(tg.url('eth-1'), balance, { apiKey })
    answers.push(res.json.result)
    agreements.add(res.headers.get('x-tollgate-consensus') ?? 'none')
  }
  t.same(
    answers.filter((r) => r !== truth),
    [],
    `every balance is the honest nodes' ${truth}; the liar was asked ${plusOne.received('eth_getBalance')} times`,
  )
  t.ok(plusOne.received('eth_getBalance') >= THRESHOLD, 'the liar was asked (it was one of the three)')
  t.same([...agreements], ['2/3'], 'the header says two of the three asked agreed')
  t.ok(
    await until(async () => (await metric(tg.gateway.admin, 'tollgate_upstream_out', { node: 'liar', reason: 'disputes' })) === 1),
    'the liar is out for disputes',
  )
  // Disputes are counted once every node asked has answered, after the client has its answer:
  // a call or two may have asked the liar before it was set to sit out.
  const disputes = (await metric(tg.gateway.admin, 'tollgate_upstream_disputes_total', { node: 'liar' })) ?? 0
  t.equal(disputes, plusOne.received('eth_getBalance'), 'each of its answers was a dispute')
  t.ok(disputes >= THRESHOLD, `at least the threshold of them (${disputes})`)
  t.equal(await metric(tg.gateway.admin, 'tollgate_upstream_sit_outs_total', { node: 'liar' }), 1)
  t.equal(await metric(tg.gateway.admin, 'tollgate_upstream_disputes_total', { node: 'honest-a' }), 0, 'the honest nodes have none')
  const asked = plusOne.received('eth_getBalance')
  for (let i = 0; i < 10; i++) t.equal((await rpc(tg.url('eth-1'), balance, { apiKey })).json.result, truth)
  t.equal(plusOne.received('eth_getBalance'), asked, 'sitting out, the liar is not asked')
  t.equal(await metric(tg.gateway.admin, 'tollgate_consensus_disagreed_total', { network: 'eth-1' }), 0)
  t.ok(((await metric(tg.gateway.admin, 'tollgate_consensus_agreed_total', { network: 'eth-1' })) ?? 0) >= 70, 'each call was agreed')
})

t.test('three different answers: the client is told the nodes disagree', async (t) => {
  const res = await rpc(tg.url('pol-1'), balance, { apiKey })
  t.equal(res.status, 502)
  t.equal(res.json.id, 7)
  t.equal(res.json.error.code, -32024)
  t.match(res.json.error.message, /nodes disagree.*3 nodes gave 3 different answers \(1 against 1 against 1\); 2 must agree/)
  t.equal(res.json.result, undefined, 'no guess')
  t.equal(await metric(tg.gateway.admin, 'tollgate_consensus_disagreed_total', { network: 'pol-1' }), 1)
  t.equal(await metric(tg.gateway.admin, 'tollgate_upstream_disputes_total', { node: 'plus-two' }), 0, 'no agreement: nobody is counted')
})

t.test('the first agreement answers, without waiting for the last node', async (t) => {
  // The block read never comes back from the node behind `stuck`, and the two others agree.
  const res = await rpc(tg.url('pol-1'), { jsonrpc: '2.0', id: 'x', method: 'eth_getBlockByNumber', params: ['0x0', false] }, { apiKey })
  t.equal(res.status, 200)
  t.equal(res.json.id, 'x')
  t.equal(res.json.result.number, '0x0')
  t.equal(stuck.forwarded('eth_getBlockByNumber'), 0, 'the stuck node had not answered (its call was still held) when the client got the block')
  t.equal(res.headers.get('x-tollgate-consensus'), '2/3')
  t.equal(res.headers.get('x-tollgate-attempts'), '3', 'three nodes were asked')
  t.ok(['plus-two', 'plus-three'].includes(res.headers.get('x-tollgate-node') ?? ''), 'a node of the agreeing two answered')
})

t.test("the client's usage counts one call per call, whatever the fan-out", async (t) => {
  const fanOut = (await metric(tg.gateway.admin, 'tollgate_consensus_fanout_total', { network: 'eth-1' })) ?? 0
  t.ok(fanOut > 70, `the nodes were asked ${fanOut} times for 70 calls`)
  await tg.stop()
  const log = await openEventLog(tg.config.events, tg.config.dataDir)
  t.teardown(() => log.close())
  let calls = 0
  for (let from = 1; ; ) {
    const batch = await log.read(from, 500)
    if (batch.length === 0) break
    for (const s of batch)
      if (s.event.type === 'UsageRecorded' && s.event.keyId === keyId && s.event.network === 'eth-1') calls += (s.event as UsageRecorded).requests
    from = batch[batch.length - 1].seq + 1
  }
  t.equal(calls, 70, '70 calls to eth-1, 70 counted')
})
