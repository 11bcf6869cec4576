import t from 'tap'
import type { Anvil } from '../../harness/anvil.js'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { connectWs, type WsClient } from '../helpers/ws-client.js'
import { metric, until } from '../helpers/metrics.js'

// When the node holding the shared subscriptions goes, the gateway re-subscribes on another
// node (or on the same one once it is back) and clients keep their subscription ids.
const {
  anvils,
  tg,
  key: { apiKey },
  wsUrl,
} = await anvilGateway(t, { anvils: 2, anvil: { blockTime: 1 } })
const [a, b] = anvils as [Anvil, Anvil]
// The gateway names a node by its host and port when the config gives it no name.
const nameA = `127.0.0.1:${a.port}`
const nameB = `127.0.0.1:${b.port}`
const url = `${wsUrl}?apikey=${apiKey}`
const base = tg.gateway.admin
const holder = async (): Promise<string | undefined> => {
  for (const name of [nameA, nameB]) if ((await metric(base, 'tollgate_ws_subscription_node', { network: 'eth-1', node: name })) === 1) return name
  return undefined
}

/** The next head on `id` whose hash is not among `seen` (a head from the node now serving). */
async function freshHead(ws: WsClient, id: string, within = 20_000): Promise<any> {
  const end = Date.now() + within
  const seen = new Set(ws.notifications(id).map((n) => n.params.result.hash))
  while (Date.now() < end) {
    const n = await ws.nextNotification(id, end - Date.now())
    if (n !== undefined && !seen.has(n.params.result.hash)) return n
  }
  return undefined
}

t.test('killing the node that holds the subscriptions moves them; restoring it and killing the other moves them back', async (t) => {
  const clients = await Promise.all([connectWs(url), connectWs(url)])
  t.teardown(() => Promise.all(clients.map((c) => c.close())))
  const ids: string[] = []
  for (const c of clients) ids.push((await c.call({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] })).result)
  for (const [i, c] of clients.entries()) t.ok(await c.nextNotification(ids[i]), `client ${i} gets heads`)

  const first = await holder()
  t.ok(first === nameA || first === nameB, `the subscriptions are on ${first}`)
  const [dying, other] = first === nameA ? [a, b] : [b, a]
  const otherName = first === nameA ? nameB : nameA
  await dying.kill()
  t.ok(await until(async () => (await holder()) === otherName), 'moved to the other node')
  for (const [i, c] of clients.entries()) {
    const head = await freshHead(c, ids[i])
    t.equal(head?.params.subscription, ids[i], `client ${i} keeps its subscription id`)
    const onOther = await other.rpc('eth_getBlockByHash', [head?.params.result.hash, false])
    t.ok(onOther.result, 'the head is a block of the other node')
  }

  await dying.restart()
  await other.kill()
  t.ok(await until(async () => (await holder()) === first, 20_000), 'moved back to the restored node')
  for (const [i, c] of clients.entries()) {
    const head = await freshHead(c, ids[i])
    t.equal(head?.params.subscription, ids[i], `client ${i} still has its id`)
  }
  t.equal(await metric(base, 'tollgate_ws_upstream_subscriptions', { network: 'eth-1', kind: 'newHeads' }), 1, 'still one upstream subscription')
  await other.restart()
})

t.test('with a single node: it goes down, comes back, and the subscription resumes', async (t) => {
  const { anvil: solo, tg: tg2, key } = await anvilGateway(t, { anvil: { blockTime: 1 } })
  const ws = await connectWs(`${tg2.wsUrl('eth-1')}?apikey=${key.apiKey}`)
  t.teardown(() => ws.close())
  const id = (await ws.call({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] })).result
  t.ok(await ws.nextNotification(id), 'a head')
  await solo.kill()
  t.ok(
    await until(async () => (await metric(tg2.gateway.admin, 'tollgate_ws_upstream_subscriptions', { network: 'eth-1', kind: 'newHeads' })) === 0),
    'the upstream subscription is gone with the node',
  )
  await solo.restart()
  const head = await freshHead(ws, id, 30_000)
  t.equal(head?.params.subscription, id, 'heads resume on the same subscription id')
})
