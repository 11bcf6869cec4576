import t from 'tap'
import { startAnvil, type Anvil } from '../../harness/anvil.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metric } from '../helpers/metrics.js'
import { waitFor } from '../helpers/eventually.js'

// Issue 32, item 7: with networks.<slug>.broadcastTransactions, eth_sendRawTransaction goes to
// every healthy full node; the first accepted hash answers, the others finish in the background.
// Three real anvils of one chain and one mnemonic (the same accounts, so the same signed
// transaction is valid on each), none mining: a transaction stays pending where it was sent, and
// eth_getTransactionByHash on each node says which got it. On main one node got it.

const nodes = await Promise.all([0, 1, 2].map(() => startAnvil({ args: ['--no-mining'] })))
t.teardown(() => Promise.all(nodes.map((n) => n.stop())))
// The third one behind the proxy: later it refuses transactions, as a node may.
const proxy = await startFaultProxy(nodes[2])
t.teardown(() => proxy.close())
const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: 31337,
      broadcastTransactions: true,
      upstreams: [nodes[0].url, nodes[1].url, proxy.url].map((url, i) => ({ url, kind: 'full' as const, name: `n${i}` })),
    },
  },
})
const { apiKey } = await tg.createKey('tier-3')
const url = tg.url('eth-1')

const from = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266'
const to = '0x70997970c51812dc3a010c7d01b50e68d4dc79c8'
/** A transfer signed by anvil's first dev account, with this nonce. */
async function signed(nonce: number): Promise<string> {
  const tx = { from, to, value: '0x1000', nonce: `0x${nonce.toString(16)}`, gas: '0x5208', gasPrice: '0x77359400' }
  return (await nodes[0].rpc('eth_signTransaction', [tx])).result
}
const send = (raw: string, id: number) => rpc(url, { jsonrpc: '2.0', id, method: 'eth_sendRawTransaction', params: [raw] }, { apiKey })
const has = async (node: Anvil, hash: string): Promise<boolean> => (await node.rpc('eth_getTransactionByHash', [hash])).result !== null

t.test('the transaction reaches every node, and its hash answers', async (t) => {
  const raw = await signed(0)
  const r = await send(raw, 1)
  t.equal(r.status, 200)
  const hash: string = r.json.result
  t.match(hash, /^0x[0-9a-f]{64}$/, 'the hash answers')
  // The first acceptance answered; the others may still be on their way.
  await waitFor(async () => (await Promise.all(nodes.map((n) => has(n, hash)))).every(Boolean), 'the transaction pending on all three nodes')
  t.equal(await metric(tg.gateway.admin, 'tollgate_tx_broadcast_total'), 1)

  // Sent again (a client retrying): every node knows it; the client gets the hash, not an error.
  const again = await send(raw, 2)
  t.same(again.json, { jsonrpc: '2.0', id: 2, result: hash }, '"already known" answers the hash')
})

t.test('a node that refuses it does not keep the others from taking it', async (t) => {
  t.teardown(() => proxy.clear())
  proxy.set('eth_sendRawTransaction', { refuse: true })
  const r = await send(await signed(1), 3)
  const hash: string = r.json.result
  t.match(hash, /^0x[0-9a-f]{64}$/, 'the hash of the nodes that took it')
  await waitFor(async () => (await has(nodes[0], hash)) && (await has(nodes[1], hash)), 'pending on the two that take it')
  t.notOk(await has(nodes[2], hash), 'not on the one that refused it')
})

t.test('a transaction every node rejects gets a node’s error', async (t) => {
  // Nonce 0 again, another recipient: a replacement at the same gas price, which anvil rejects.
  const tx = { from, to: from, value: '0x1', nonce: '0x0', gas: '0x5208', gasPrice: '0x77359400' }
  const raw = (await nodes[0].rpc('eth_signTransaction', [tx])).result
  const direct = await nodes[1].rpc('eth_sendRawTransaction', [raw])
  t.ok(direct.error, `the node rejects it: ${JSON.stringify(direct.error)}`)
  const r = await send(raw, 4)
  t.same(r.json.error, direct.error, "the node's own error reaches the client")
})

t.test('every node says "nonce too low": each node asked once whether it knows the transaction', async (t) => {
  // Mined everywhere: nonce 0 is used on all three nodes, so a new transaction with it is too low.
  await Promise.all(nodes.map((n) => n.rpc('evm_mine')))
  const tx = { from, to, value: '0x2', nonce: '0x0', gas: '0x5208', gasPrice: '0x77359400' }
  const raw = (await nodes[0].rpc('eth_signTransaction', [tx])).result
  const direct = await nodes[1].rpc('eth_sendRawTransaction', [raw])
  t.match(direct.error?.message, /nonce/i, `the node says why: ${JSON.stringify(direct.error)}`)
  const before = proxy.received('eth_getTransactionByHash')
  const r = await send(raw, 5)
  t.same(r.json.error, direct.error, "the node's own error reaches the client: no node knows this transaction")
  // One lookup shared by the three refusals; each refusal asking every node was 3 here (N² for N nodes).
  t.equal(proxy.received('eth_getTransactionByHash') - before, 1, 'the node behind the proxy was asked once')
})
