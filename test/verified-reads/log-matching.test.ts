import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { deployAnonymousLogEmitter, deployLogEmitter, EMITTED_TOPIC, mineLogsBlock } from '../../harness/log-emitter.js'
import { startFaultProxy } from '../helpers/fault-proxy.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metric } from '../helpers/metrics.js'

// Clients differ on one point of eth_getLogs matching: a filter with more topic positions than a
// log has topics. geth never matches such a log, trailing wildcards (null, []) included; anvil and
// reth match it when the positions past its last topic are wildcards. A verified eth_getLogs
// checks what every client's rule agrees on: an honest anvil (eth-1) and a node that follows
// geth's rule (eth-2, anvil's answer cut to geth's rule by its proxy) are both answered and
// neither is counted; a node that leaves out a log every client's rule matches is caught (eth-3).

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
await anvil.rpc('anvil_mine', ['0x46'])
const [one, anon] = [await deployLogEmitter(anvil), await deployAnonymousLogEmitter(anvil)]
// One block of three logs, in this order: one topic, no topic, one topic.
await mineLogsBlock(anvil, one.from, [
  [one.address, '0x01'],
  [anon.address, '0x02'],
  [one.address, '0x03'],
])

type Log = { topics: string[]; data: string }
/** geth's rule: a log with fewer topics than the filter has positions is never matched. */
const gethRule = (logs: unknown, call: { params: unknown }) => {
  const positions = ((call.params as [{ topics?: unknown[] }])[0]?.topics ?? []).length
  return (logs as Log[]).filter((l) => l.topics.length >= positions)
}
const [anvilLike, gethLike, liar] = await Promise.all([0, 1, 2].map(() => startFaultProxy(anvil)))
t.teardown(() => Promise.all([anvilLike, gethLike, liar].map((p) => p!.close())))
gethLike!.set('eth_getLogs', { alter: gethRule })
// Leaves out the first log geth's rule matches (one every client's node answers); where geth's rule
// matches none, alters the first log's data (a log no rule matches).
liar!.set('eth_getLogs', {
  alter: (logs, call) => {
    const first = gethRule(logs, call)[0]
    if (first !== undefined) return (logs as Log[]).filter((l) => l !== first)
    return (logs as Log[]).map((l, i) => (i === 0 ? { ...l, data: '0x66' } : l))
  },
})

const network = (name: string, url: string) => ({ chainId: 31337, verify: 'reads' as const, upstreams: [{ url, name, kind: 'full' as const }] })
const tg = await startTestGateway(t, {
  networks: { 'eth-1': network('anvil-like', anvilLike!.url), 'eth-2': network('geth-like', gethLike!.url), 'eth-3': network('liar', liar!.url) },
  config: { diagnostics: { responseHeaders: true }, cache: { enabled: false } },
})
const { apiKey } = await tg.createKey('tier-3')
const head = `0x${Number((await anvil.rpc('eth_blockNumber')).result).toString(16)}`
const filters: [string, unknown[]][] = [
  ['[T, null]', [EMITTED_TOPIC, null]],
  ['[null]', [null]],
  ['[[]]', [[]]],
  ['[T, []]', [EMITTED_TOPIC, []]],
  ['[T] (every client agrees)', [EMITTED_TOPIC]],
]
const getLogs = (topics: unknown[]) => ({ jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [{ fromBlock: '0x40', toBlock: head, topics }] })

t.test('anvil’s rule and geth’s differ on these filters (else this test shows nothing)', async (t) => {
  const all = (await anvil.rpc('eth_getLogs', [{ fromBlock: '0x40', toBlock: head, topics: [null] }])).result as Log[]
  t.same(
    all.map((l) => l.topics.length),
    [1, 0, 1],
    'anvil answers [null] with the log of no topic too',
  )
})

for (const [network, node] of [
  ['eth-1', 'anvil-like'],
  ['eth-2', 'geth-like'],
] as const) {
  t.test(`a node on ${node === 'anvil-like' ? 'anvil’s' : 'geth’s'} rule: every filter answered verified, the node never counted`, async (t) => {
    for (const [what, topics] of filters) {
      const r = await rpc(tg.url(network), getLogs(topics), { apiKey })
      const truth = (await rpc(network === 'eth-1' ? anvilLike!.url : gethLike!.url, getLogs(topics))).json.result
      t.same(r.json.result, truth, `${what}: the node’s answer (${JSON.stringify(r.json.error ?? '')})`)
      t.ok(r.headers.get('x-tollgate-verified'), `${what}: verified`)
    }
    t.equal((await metric(tg.gateway.admin, 'tollgate_verify_failed_total', { network, check: 'LOGS_COMPLETE' })) ?? 0, 0, 'no failed check')
  })
}

t.test('a log every client’s rule matches, left out, or a log altered, is caught under trailing wildcards too', async (t) => {
  for (const [what, topics] of filters) {
    const r = await rpc(tg.url('eth-3'), getLogs(topics), { apiKey })
    t.equal(r.json.error?.code, -32026, `${what}: ANSWER_UNVERIFIED`)
    t.match(r.json.error?.message, /LOGS_COMPLETE/, `${what}: the check named`)
  }
})
