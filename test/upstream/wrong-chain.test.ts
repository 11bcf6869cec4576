import { Writable } from 'node:stream'
import pino from 'pino'
import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metric } from '../helpers/metrics.js'
import { waitFor } from '../helpers/eventually.js'

// Issue 32, item 8: a node of chain 31337 put by mistake into a chain-1 network, at the same
// height, must never serve. On main it answered half of the balance reads with its own chain's
// state. Two real anvils; the proxy in front of the wrong one counts what reaches it, and later
// makes the right one answer another chain id (a node restarted on another chain).

const [right, wrong] = await Promise.all([startAnvil({ chainId: 1 }), startAnvil({ chainId: 31337 })])
t.teardown(() => Promise.all([right.stop(), wrong.stop()]))
const [rightProxy, wrongProxy] = await Promise.all([startFaultProxy(right), startFaultProxy(wrong)])
t.teardown(() => Promise.all([rightProxy.close(), wrongProxy.close()]))

// One address, a different balance on each chain: the answer says which chain's state it is.
const who = '0x1111111111111111111111111111111111111111'
await right.rpc('anvil_setBalance', [who, '0x1'])
await wrong.rpc('anvil_setBalance', [who, '0x2'])
// The same height on both (anvil_setBalance mines nothing): nothing but the chain tells them apart.
const heights = [(await right.rpc('eth_blockNumber')).result, (await wrong.rpc('eth_blockNumber')).result]

const logs: any[] = []
const logStream = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString().split('\n')) if (line !== '') logs.push(JSON.parse(line))
    done()
  },
})
const named = { right: rightProxy, wrong: wrongProxy }
const tg = await startTestGateway(t, {
  networks: { 'eth-1': { chainId: 1, upstreams: Object.entries(named).map(([name, p]) => ({ url: p.url, kind: 'full' as const, name })) } },
  config: { health: { pollMs: 100 }, cache: { enabled: false } },
  logger: pino({ level: 'warn' }, logStream),
})
const { apiKey } = await tg.createKey('tier-3')
const url = tg.url('eth-1')
const readyz = async (): Promise<{ status: number; text: string }> => {
  const res = await fetch(`${tg.gateway.admin}/readyz`)
  return { status: res.status, text: await res.text() }
}

t.test('0 of 100 balance reads reach the node of the other chain', async (t) => {
  t.equal(heights[0], heights[1], 'both nodes at the same height')
  const before = wrongProxy.forwarded('eth_getBalance')
  const balances = new Map<string, number>()
  for (let i = 0; i < 100; i++) {
    const r = await rpc(url, { jsonrpc: '2.0', id: i, method: 'eth_getBalance', params: [who, 'latest'] }, { apiKey })
    balances.set(r.json.result, (balances.get(r.json.result) ?? 0) + 1)
  }
  t.same(Object.fromEntries(balances), { '0x1': 100 }, "every answer is chain 1's state")
  t.equal(wrongProxy.forwarded('eth_getBalance'), before, 'the node of chain 31337 was sent none')
})

t.test('it is reported: one log line with both chain ids, /readyz, /metrics', async (t) => {
  const lines = logs.filter((l) => l.node === 'wrong' && /another chain/.test(l.msg))
  t.equal(lines.length, 1, 'logged once, though every poll asks again')
  t.match(lines[0], { network: 'eth-1', chainId: 31337, expectedChainId: 1 })
  const ready = await readyz()
  t.equal(ready.status, 200, 'the gateway is ready: the other node serves')
  t.match(ready.text, /eth-1 node wrong: out, wrong chain: it answers eth_chainId 31337, the network's chainId is 1/)
  t.equal(await metric(tg.gateway.admin, 'tollgate_upstream_out', { node: 'wrong', reason: 'wrong-chain' }), 1)
  t.equal(await metric(tg.gateway.admin, 'tollgate_upstream_out', { node: 'right', reason: 'wrong-chain' }), 0)
  t.equal(await metric(tg.gateway.admin, 'tollgate_upstream_healthy', { node: 'wrong' }), 0)
  t.equal(await metric(tg.gateway.admin, 'tollgate_upstream_chain_id', { node: 'wrong' }), 31337)
})

t.test('rechecked at every poll: a node that answers another chain id later is taken out, and let back', async (t) => {
  t.teardown(() => rightProxy.clear())
  // The right node now says chain 5 (as a node restarted with another genesis would): out at the
  // next poll; with both out, the network has no node to serve.
  rightProxy.set('eth_chainId', { alter: () => '0x5' })
  await waitFor(async () => (await metric(tg.gateway.admin, 'tollgate_upstream_out', { node: 'right', reason: 'wrong-chain' })) === 1, 'the right node out')
  const none = await rpc(url, { jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [who, 'latest'] }, { apiKey })
  t.equal(none.status, 503, 'no node of chain 1 left: 503, not the state of another chain')
  t.ok(
    logs.some((l) => l.node === 'right' && l.chainId === 5 && l.expectedChainId === 1),
    'logged with both chain ids',
  )
  rightProxy.clear()
  await waitFor(async () => (await metric(tg.gateway.admin, 'tollgate_upstream_out', { node: 'right', reason: 'wrong-chain' })) === 0, 'the right node back')
  const back = await rpc(url, { jsonrpc: '2.0', id: 2, method: 'eth_getBalance', params: [who, 'latest'] }, { apiKey })
  t.equal(back.json.result, '0x1', 'served again by the node of chain 1')
  t.notMatch((await readyz()).text, /node right/, '/readyz no longer names it')
})
