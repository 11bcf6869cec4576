import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { connectWs } from '../helpers/ws-client.js'
import { metric } from '../helpers/metrics.js'

// Distinct upstream logs filters are capped per key and per network, on a real gateway and a real
// anvil. Each distinct filter is a subscription on our node, matched against every block's logs;
// before, one key's 50 connections × 100 subscriptions were 5,000 of them, all opened upstream.

const root = t
const PER_KEY = 3
const PER_NETWORK = 5
// Each subtest makes its own key.
const { tg } = await anvilGateway(t, { ws: { maxLogsFiltersPerKey: PER_KEY, maxLogsFiltersPerNetwork: PER_NETWORK }, plan: null })
const filter = (n: number) => ({ address: `0x${n.toString(16).padStart(40, '0')}` })
let id = 0
const subscribe = (n: number) => ({ jsonrpc: '2.0', id: ++id, method: 'eth_subscribe', params: ['logs', filter(n)] })
const upstreamLogs = () => metric(tg.gateway.admin, 'tollgate_ws_upstream_subscriptions', { network: 'eth-1', kind: 'logs' })
const refusedBy = (limit: string) => metric(tg.gateway.admin, 'tollgate_ws_logs_filters_refused_total', { network: 'eth-1', limit })

t.test('per key: 3 distinct filters, asked for at once; the same filter again is not a new one', async (t) => {
  const a = await tg.createKey('tier-3')
  const one = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${a.apiKey}`)
  const two = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${a.apiKey}`)
  // Open until the file ends: the next subtest counts these filters on the network.
  root.teardown(() => Promise.all([one.close(), two.close()]))
  const first = await Promise.all([1, 2, 3, 4].map((n) => one.call(subscribe(n))))
  const made = first.filter((r: any) => typeof r.result === 'string')
  const refused = first.filter((r: any) => r.error !== undefined)
  t.equal(made.length, PER_KEY, 'three are made')
  t.equal(refused.length, 1, 'the fourth is refused, though all four were asked for before any was answered')
  t.equal(refused[0].error.code, -32034)
  t.equal(
    refused[0].error.message,
    'Too many logs filters: this key holds 3 distinct logs filters on eth-1, at most 3 are allowed per key and network (ws.maxLogsFiltersPerKey); put several addresses and topics in one filter, reuse a filter you hold, or unsubscribe some',
  )
  t.equal(await refusedBy('key'), 1, 'counted on /metrics')
  const held = first.map((r: any, i: number) => ({ n: i + 1, sub: r.result })).filter((x) => typeof x.sub === 'string')
  // On another connection of the same key: a filter it holds is not a new one, another one is.
  t.type((await two.call(subscribe(held[0].n))).result, 'string', 'a filter the key holds already, on another connection')
  const fresh = await two.call(subscribe(9))
  t.equal(fresh.error?.code, -32034, 'a new one on another connection is refused too')
  t.equal((await one.call({ jsonrpc: '2.0', id: ++id, method: 'eth_unsubscribe', params: [held[2].sub] })).result, true)
  t.type((await two.call(subscribe(9))).result, 'string', 'unsubscribing one makes room for a new one')
  t.equal(await upstreamLogs(), PER_KEY, 'three filters on the node')
})

t.test('per network: new filters past the cap are refused for every key; a filter in use is shared', async (t) => {
  const b = await tg.createKey('tier-3')
  const ws = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${b.apiKey}`)
  t.teardown(() => ws.close())
  t.type((await ws.call(subscribe(20))).result, 'string')
  t.type((await ws.call(subscribe(21))).result, 'string')
  t.equal(await upstreamLogs(), PER_NETWORK, 'five filters on the node: the network is full')
  const past = await ws.call(subscribe(22))
  t.equal(past.error?.code, -32034)
  t.equal(
    past.error?.message,
    'Too many logs filters on eth-1: the gateway holds 5 distinct logs subscriptions on its nodes, at most 5 (ws.maxLogsFiltersPerNetwork); subscribe to a filter already in use, or retry later',
  )
  t.equal(await refusedBy('network'), 1, 'counted on /metrics')
  t.type((await ws.call(subscribe(9))).result, 'string', "another key's filter is shared: no new one on the node")
  t.equal(await upstreamLogs(), PER_NETWORK)
  t.type((await ws.call({ jsonrpc: '2.0', id: ++id, method: 'eth_subscribe', params: ['newHeads'] })).result, 'string', 'other kinds are not counted')
})
