import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { metricNow } from '../helpers/metrics.js'

// Identical reads of one batch are asked once and each copy answered with its own id; calls that
// change something on the node (a filter made, a transaction) are never merged.
const {
  tg,
  key: { apiKey },
} = await anvilGateway(t, { nodeWs: false, quiet: true })
/** The calls that reached the node, as /metrics says them. */
const nodeCalls = () => metricNow(tg.gateway.admin, 'tollgate_upstream_calls_total', { network: 'eth-1' })
const address = `0x${'7'.repeat(40)}`

t.test('copies of a read are asked once, each answered with its own id', async (t) => {
  const before = await nodeCalls()
  const reply = await rpc(
    tg.url('eth-1'),
    [
      { jsonrpc: '2.0', id: 'a', method: 'eth_getBalance', params: [address, 'latest'] },
      { jsonrpc: '2.0', id: 2, method: 'eth_blockNumber', params: [] },
      { jsonrpc: '2.0', id: 'b', method: 'eth_getBalance', params: [address, 'latest'] },
      { jsonrpc: '2.0', method: 'eth_getBalance', params: [address, 'latest'] },
      { jsonrpc: '2.0', id: null, method: 'eth_getBalance', params: [address, 'latest'] },
    ],
    { apiKey },
  )
  const answers = reply.json as Array<{ id: unknown; result: unknown }>
  t.same(
    answers.map((a) => a.id),
    ['a', 2, 'b', null],
    'every call with an id answered with its own, in order; the notification not answered',
  )
  t.equal(answers[0].result, '0x0')
  t.equal(answers[2].result, '0x0')
  t.equal(answers[3].result, '0x0')
  t.equal((await nodeCalls()) - before, 2, 'one upstream call for the four balances, one for the block number')
})

t.test('calls with the same params and another method are not copies', async (t) => {
  const before = await nodeCalls()
  const reply = await rpc(
    tg.url('eth-1'),
    [
      { jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [address, 'latest'] },
      { jsonrpc: '2.0', id: 2, method: 'eth_getCode', params: [address, 'latest'] },
      { jsonrpc: '2.0', id: 3, method: 'eth_getTransactionCount', params: [address, 'latest'] },
      { jsonrpc: '2.0', id: 4, method: 'eth_getCode', params: [address, 'latest'] },
    ],
    { apiKey },
  )
  const answers = reply.json as Array<{ id: unknown; result: unknown }>
  t.same(
    answers.map((a) => [a.id, a.result]),
    [
      [1, '0x0'],
      [2, '0x'],
      [3, '0x0'],
      [4, '0x'],
    ],
    'each method answered as itself; the second eth_getCode as the first',
  )
  t.equal((await nodeCalls()) - before, 3, 'three upstream calls: one per method')
})

t.test('filters made in one batch are separate filters', async (t) => {
  const reply = await rpc(
    tg.url('eth-1'),
    [
      { jsonrpc: '2.0', id: 1, method: 'eth_newBlockFilter', params: [] },
      { jsonrpc: '2.0', id: 2, method: 'eth_newBlockFilter', params: [] },
    ],
    { apiKey },
  )
  const [first, second] = reply.json as Array<{ id: number; result: string }>
  t.match(first.result, /^0x[0-9a-f]+$/)
  t.match(second.result, /^0x[0-9a-f]+$/)
  t.not(first.result, second.result, 'two filters')
})
