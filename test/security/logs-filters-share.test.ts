import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { connectWs } from '../helpers/ws-client.js'
import { metric } from '../helpers/metrics.js'

// The distinct logs filters of a network are split between tenants (issue 38, item 4), on a real
// gateway and a real anvil: an account's keys share one cap, and an account holding more than the
// network has free gets none of the rest. Before, the network's cap was filled by a few keys
// (at the defaults, 50 keys of 100 filters) and every other key was refused.

const PER_ACCOUNT = 4
const PER_NETWORK = 8
const { tg } = await anvilGateway(t, { ws: { maxLogsFiltersPerAccount: PER_ACCOUNT, maxLogsFiltersPerNetwork: PER_NETWORK }, plan: null })
const filter = (n: number) => ({ address: `0x${n.toString(16).padStart(40, '0')}` })
let id = 0
const subscribe = (n: number) => ({ jsonrpc: '2.0', id: ++id, method: 'eth_subscribe', params: ['logs', filter(n)] })
const upstreamLogs = () => metric(tg.gateway.admin, 'tollgate_ws_upstream_subscriptions', { network: 'eth-1', kind: 'logs' })
const refusedBy = (limit: string) => metric(tg.gateway.admin, 'tollgate_ws_logs_filters_refused_total', { network: 'eth-1', limit })
const connect = async (t: { teardown(fn: () => unknown): void }, apiKey: string) => {
  const ws = await connectWs(`${tg.wsUrl('eth-1')}?apikey=${apiKey}`)
  t.teardown(() => ws.close())
  return ws
}
const made = (answers: any[]) => answers.filter((r) => typeof r.result === 'string').length

const root = t

t.test('the keys of an account share its cap; a filter its account holds is not a new one', async (t) => {
  // Account A: a key regenerated with a grace period, so two live keys.
  const a = await tg.createKey('tier-3')
  const a2 = await tg.regenerateKey(a.accountId, 3_600_000)
  // Open until the file ends: the next subtest counts these filters on the network.
  const one = await connect(root, a.apiKey)
  const first = await Promise.all([1, 2, 3, 4, 5].map((n) => one.call(subscribe(n))))
  t.equal(made(first), PER_ACCOUNT, 'four distinct filters, though five were asked for at once')
  const past = first.find((r: any) => r.error !== undefined)
  t.equal(past.error.code, -32034)
  t.equal(
    past.error.message,
    'Too many logs filters: the keys of this account hold 4 distinct logs filters on eth-1, at most 4 are allowed per account and network (ws.maxLogsFiltersPerAccount); put several addresses and topics in one filter, reuse a filter you hold, or unsubscribe some',
  )
  const two = await connect(root, a2.apiKey)
  t.equal((await two.call(subscribe(6))).error?.code, -32034, "the account's other key gets no new one")
  t.type((await two.call(subscribe(1))).result, 'string', 'a filter its account holds is not a new one')
  t.equal(await refusedBy('account'), 2, 'counted on /metrics')
})

t.test('an account holding more than the network has free gets none of the rest; another account still subscribes', async (t) => {
  // Account A holds 4 of 8; account B asks for more than it may take of what is left.
  const b = await tg.createKey('tier-3')
  const bws = await connect(t, b.apiKey)
  const second = await Promise.all([11, 12, 13, 14].map((n) => bws.call(subscribe(n))))
  t.equal(made(second), 3, 'three: holding three, with one free, it takes no more')
  const share = second.find((r: any) => r.error !== undefined)
  t.equal(share.error.code, -32034)
  t.equal(
    share.error.message,
    'Too many logs filters on eth-1: this account holds 3 distinct logs filters and the network has 1 free (ws.maxLogsFiltersPerNetwork), which are kept for accounts holding fewer; reuse a filter you hold, unsubscribe some, or retry later',
  )
  t.equal(await refusedBy('share'), 1, 'counted on /metrics')

  const c = await tg.createKey('tier-3')
  const cws = await connect(t, c.apiKey)
  t.type((await cws.call(subscribe(21))).result, 'string', 'another account subscribes to a new filter')
  t.equal(await upstreamLogs(), PER_NETWORK, 'the network is full now')
  t.equal((await cws.call(subscribe(22))).error?.code, -32034, 'and refuses the next')
  t.type((await cws.call(subscribe(11))).result, 'string', "another account's filter is shared: no new one on the node")
})
