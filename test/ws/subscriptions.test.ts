import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { connectWs, type WsClient } from '../helpers/ws-client.js'
import { metric, until } from '../helpers/metrics.js'
import { deployTransferEmitter, TRANSFER_TOPIC } from '../helpers/transfer-emitter.js'

// Subscriptions through the gateway, against anvil mining a block every second.
const {
  anvil,
  tg,
  key: { apiKey },
  wsUrl,
} = await anvilGateway(t, { anvil: { blockTime: 1 } })
const url = `${wsUrl}?apikey=${apiKey}`
const base = tg.gateway.admin
const newHeadsUpstream = () => metric(base, 'tollgate_ws_upstream_subscriptions', { network: 'eth-1', kind: 'newHeads' })

async function subscribe(ws: WsClient, params: unknown[], id: unknown = 1): Promise<string> {
  const answer = await ws.call({ jsonrpc: '2.0', id, method: 'eth_subscribe', params })
  if (typeof answer.result !== 'string') throw new Error(`subscribe failed: ${JSON.stringify(answer)}`)
  return answer.result
}

t.test('heads arrive for newHeads and newBlockHeaders, each client with its own id', async (t) => {
  const a = await connectWs(url)
  const b = await connectWs(url)
  t.teardown(() => Promise.all([a.close(), b.close()]))
  const idA = await subscribe(a, ['newHeads'])
  const idB = await subscribe(b, ['newBlockHeaders'], 'x')
  t.not(idA, idB, 'each client sees its own subscription id')
  const [headA, headB] = await Promise.all([a.nextNotification(idA), b.nextNotification(idB)])
  t.equal(headA?.method, 'eth_subscription')
  t.equal(headA?.params.subscription, idA)
  t.equal(headB?.params.subscription, idB)
  t.match(headA?.params.result, { number: /^0x[0-9a-f]+$/, hash: /^0x[0-9a-f]{64}$/, parentHash: /^0x/ })
  const next = await a.nextNotification(idA)
  t.equal(BigInt(next?.params.result.number), BigInt(headA?.params.result.number) + 1n, 'block after block')
  t.equal(await newHeadsUpstream(), 1, 'newHeads and newBlockHeaders share one upstream subscription')
})

t.test('many clients on one network: exactly one upstream newHeads subscription', async (t) => {
  t.ok(await until(async () => (await newHeadsUpstream()) === 0), 'the clients of the test before are gone')
  const before = (await metric(base, 'tollgate_ws_upstream_subscribe_calls_total', { network: 'eth-1', kind: 'newHeads' }))!
  const clients = await Promise.all(Array.from({ length: 12 }, () => connectWs(url)))
  t.teardown(() => Promise.all(clients.map((c) => c.close())))
  const ids = await Promise.all(clients.map((c, i) => subscribe(c, ['newHeads'], i)))
  t.equal(new Set(ids).size, 12, 'twelve distinct ids')
  const heads = await Promise.all(clients.map((c, i) => c.nextNotification(ids[i])))
  t.ok(
    heads.every((h) => h !== undefined),
    'every client gets the head',
  )
  t.equal(new Set(heads.map((h) => h.params.result.hash)).size <= 2, true, 'the same heads')
  t.equal(await newHeadsUpstream(), 1, 'one upstream subscription')
  t.equal(
    await metric(base, 'tollgate_ws_upstream_subscribe_calls_total', { network: 'eth-1', kind: 'newHeads' }),
    before + 1,
    'one eth_subscribe sent upstream for twelve clients',
  )
})

t.test('eth_unsubscribe stops the notifications; closing ends the upstream subscription', async (t) => {
  const a = await connectWs(url)
  const b = await connectWs(url)
  t.teardown(() => Promise.all([a.close(), b.close()]))
  const idA = await subscribe(a, ['newHeads'])
  const idB = await subscribe(b, ['newHeads'])
  t.ok(await a.nextNotification(idA), 'a head before')
  const stop = await a.call({ jsonrpc: '2.0', id: 2, method: 'eth_unsubscribe', params: [idA] })
  t.same(stop, { jsonrpc: '2.0', id: 2, result: true })
  const seen = a.notifications(idA).length
  t.ok(await b.nextNotification(idB), 'the other client still gets heads...')
  t.ok(await b.nextNotification(idB), '...two of them')
  t.equal(a.notifications(idA).length, seen, 'and the unsubscribed one none')
  t.same(await a.call({ jsonrpc: '2.0', id: 3, method: 'eth_unsubscribe', params: [idA] }), { jsonrpc: '2.0', id: 3, result: false }, 'a second time: false')
  t.same(
    await a.call({ jsonrpc: '2.0', id: 4, method: 'eth_unsubscribe', params: [idB] }),
    { jsonrpc: '2.0', id: 4, result: false },
    "another connection's id: false",
  )
  await b.close()
  t.ok(await until(async () => (await newHeadsUpstream()) === 0), 'no client left: the upstream subscription ends')
})

t.test('a contract event arrives on a logs subscription; identical filters share one upstream subscription', async (t) => {
  const emitter = await deployTransferEmitter(anvil)
  const a = await connectWs(url)
  const b = await connectWs(url)
  t.teardown(() => Promise.all([a.close(), b.close()]))
  const idA = await subscribe(a, ['logs', { address: emitter.address, topics: [TRANSFER_TOPIC] }])
  // The same filter written differently: upper-case address, the topic as a one-element OR, fromBlock latest.
  const idB = await subscribe(b, ['logs', { address: emitter.address.toUpperCase().replace('0X', '0x'), topics: [[TRANSFER_TOPIC]], fromBlock: 'latest' }])
  t.equal(await metric(base, 'tollgate_ws_upstream_subscriptions', { network: 'eth-1', kind: 'logs' }), 1, 'one upstream logs subscription')
  const other = await subscribe(b, ['logs', { address: '0x' + '00'.repeat(19) + '01' }], 'other')
  t.equal(await metric(base, 'tollgate_ws_upstream_subscriptions', { network: 'eth-1', kind: 'logs' }), 2, 'another filter: another one')
  // Waiting from before the emit: the log may be relayed before the emit's receipt comes back.
  const logs = Promise.all([a.nextNotification(idA, 15_000), b.nextNotification(idB, 15_000)])
  const tx = await emitter.emit()
  const [logA, logB] = await logs
  t.equal(logA?.params.subscription, idA)
  t.equal(logB?.params.subscription, idB)
  t.equal(logA?.params.result.transactionHash, tx)
  t.equal(logA?.params.result.address.toLowerCase(), emitter.address.toLowerCase())
  t.same(logA?.params.result.topics, [TRANSFER_TOPIC])
  t.same(logB?.params.result, logA?.params.result, 'the same log, byte for byte but the id')
  t.equal(b.notifications(other).length, 0, 'the other filter saw nothing')
})

t.test('newPendingTransactions delivers the hash of a transaction sent', async (t) => {
  const a = await connectWs(url)
  t.teardown(() => a.close())
  const id = await subscribe(a, ['newPendingTransactions'])
  const from = (await anvil.rpc('eth_accounts')).result[0]
  const sent = await anvil.rpc('eth_sendTransaction', [{ from, to: from, value: '0x1' }])
  // Every notification received counts, also one that came while eth_sendTransaction was being
  // answered (before, only those after it did: a race the machine's speed decided). 15 s is an
  // outer bound, so that the test cannot hang.
  const found = await until(() => a.notifications(id).some((n) => n.params.result === sent.result || n.params.result?.hash === sent.result), 15_000)
  t.ok(found, 'the pending transaction hash arrived')
})
