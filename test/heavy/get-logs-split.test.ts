import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { metricNow } from '../helpers/metrics.js'
import { deployLogEmitter, emitLogs, EMITTED_TOPIC } from '../../harness/log-emitter.js'

// A wide eth_getLogs is split into chunks through the gateway, and the client gets exactly what
// one call to the node gives; ranges and results over the limits are refused with a range that works.
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const emitter = await deployLogEmitter(anvil)
const emitted = await emitLogs(anvil, emitter, { blocks: 40, perBlock: 15, gap: 25 })
const head = parseInt((await anvil.rpc('eth_blockNumber')).result, 16)

const networks = {
  'eth-1': {
    chainId: 31337,
    upstreams: [
      { url: anvil.url, kind: 'full' as const },
      { url: anvil.url, kind: 'archive' as const },
    ],
  },
}
// Chunks of 64 blocks: the whole history (about 1000 blocks) is 17 chunks.
const wide = await startTestGateway(t, { networks, config: { heavy: { getLogs: { chunkBlocks: 64, concurrency: 3 } } } })
const narrow = await startTestGateway(t, { networks, config: { heavy: { getLogs: { chunkBlocks: 64, maxRangeBlocks: 300, maxLogs: 100 } } } })
const key = (await wide.createKey('tier-3')).apiKey
const narrowKey = (await narrow.createKey('tier-3')).apiKey

const direct = async (filter: object) => (await anvil.rpc('eth_getLogs', [filter])).result as Array<{ blockNumber: string; data: string }>
const through = async (url: string, apiKey: string, filter: object) =>
  rpc(url, { jsonrpc: '2.0', id: 'logs', method: 'eth_getLogs', params: [filter] }, { apiKey })

t.test('a wide range split into chunks answers what the node answers in one call', async (t) => {
  for (const filter of [
    { fromBlock: '0x0', toBlock: `0x${head.toString(16)}` },
    { fromBlock: '0x0', toBlock: 'latest', address: emitter.address },
    { fromBlock: 'earliest', toBlock: 'latest', topics: [EMITTED_TOPIC] },
    { fromBlock: '0x25', toBlock: `0x${(head - 7).toString(16)}` },
  ]) {
    const expected = await direct(filter)
    const res = await through(wide.url('eth-1'), key, filter)
    t.equal(res.status, 200)
    t.equal(res.json.id, 'logs')
    t.same(res.json.result, expected, `same logs, same order: ${JSON.stringify(filter)}`)
  }
  t.equal((await direct({ fromBlock: '0x0', toBlock: 'latest' })).length, emitted, 'every emitted log is there')
  const metrics = await (await fetch(`${wide.gateway.admin}/metrics`)).text()
  t.match(metrics, /tollgate_getlogs_split_total \d+/)
  t.ok((await metricNow(wide.gateway.admin, 'tollgate_getlogs_chunks_total')) >= 17, 'the calls went as chunks')
})

t.test('a range whose top is past the head is measured to the head, and answered as the node answers it', async (t) => {
  // On this chain of about 1,000 blocks, 0xffffff was refused as 16,777,216 blocks where the node answers the logs.
  for (const [gateway, apiKey, filter] of [
    [wide, key, { fromBlock: '0x0', toBlock: '0xffffff' }],
    [narrow, narrowKey, { fromBlock: `0x${(head - 100).toString(16)}`, toBlock: '0xffffff' }],
    [narrow, narrowKey, { fromBlock: `0x${(head + 5).toString(16)}`, toBlock: '0xffffff' }],
  ] as const) {
    const expected = await anvil.rpc('eth_getLogs', [filter])
    const res = await through(gateway.url('eth-1'), apiKey, filter)
    t.equal(res.status, 200)
    if (expected.error !== undefined) t.same(res.json.error, expected.error, `the node's own answer: ${JSON.stringify(filter)}`)
    else t.same(res.json.result, expected.result, `same logs: ${JSON.stringify(filter)}`)
  }
  const wider = await through(narrow.url('eth-1'), narrowKey, { fromBlock: '0x0', toBlock: '0xffffff' })
  t.match(
    wider.json.error?.message,
    new RegExp(`${head + 1} blocks \\(0x0 to 0x${head.toString(16)}\\).*\\[0x0, 0x12b\\]`),
    'too wide up to the head: measured to it',
  )
})

t.test('a range over maxRangeBlocks is refused with a range that works', async (t) => {
  // An address with no logs, so that the suggested range is not refused for its log count.
  const res = await through(narrow.url('eth-1'), narrowKey, { fromBlock: '0x10', toBlock: '0x200', address: emitter.from })
  t.equal(res.status, 200)
  t.equal(res.json.error.code, -32602)
  t.match(res.json.error.message, /at most 300 .*Try with this block range \[0x10, 0x13b\]/)
  const [, a, b] = /\[(0x[0-9a-f]+), (0x[0-9a-f]+)\]/.exec(res.json.error.message)!
  const retry = await through(narrow.url('eth-1'), narrowKey, { fromBlock: a, toBlock: b, address: emitter.from })
  t.same(retry.json.result, await direct({ fromBlock: a, toBlock: b, address: emitter.from }), 'the suggested range is served')
})

t.test('a result over maxLogs is refused with a range that holds at most maxLogs', async (t) => {
  const filter = { fromBlock: '0x0', toBlock: '0x12b' }
  t.ok((await direct(filter)).length > 100, 'the range holds more than maxLogs')
  const res = await through(narrow.url('eth-1'), narrowKey, filter)
  t.equal(res.json.error?.code, -32602)
  t.match(res.json.error.message, /more than 100 logs\. Try with this block range \[0x0, 0x[0-9a-f]+\]/)
  const [, a, b] = /\[(0x[0-9a-f]+), (0x[0-9a-f]+)\]/.exec(res.json.error.message)!
  const retry = await through(narrow.url('eth-1'), narrowKey, { fromBlock: a, toBlock: b })
  const expected = await direct({ fromBlock: a, toBlock: b })
  t.ok(expected.length > 0 && expected.length <= 100, `the suggested range holds ${expected.length} logs`)
  t.same(retry.json.result, expected)
})

t.test('a node error for a chunk reaches the client unchanged', async (t) => {
  const filter = { fromBlock: '0x0', toBlock: `0x${head.toString(16)}`, address: 'not-an-address' }
  const expected = await anvil.rpc('eth_getLogs', [filter])
  const res = await through(wide.url('eth-1'), key, filter)
  t.same(res.json.error, expected.error)
})
