import t from 'tap'
import { rawRpc, startAnvil } from '../../harness/anvil.js'
import { batchHeadId, splitBatch } from '../../src/upstream/json-rpc-wire.js'
import { httpAndWsPools } from '../helpers/upstream-pool.js'

// The calls of a client batch go to the node as ONE upstream batch; each answer must still be
// the node's own bytes with the client's id, in the client's order, over both transports.

t.test('splitBatch returns each element as the node wrote it', async (t) => {
  t.same(splitBatch('[{"id":1,"result":"]"},{"id":2,"result":[1,[2]]}]'), ['{"id":1,"result":"]"}', '{"id":2,"result":[1,[2]]}'])
  t.same(splitBatch(' [ {"id":"a\\"]"} , {"id":3} ] '), ['{"id":"a\\"]"}', '{"id":3}'])
  t.same(splitBatch('[]'), [])
  t.equal(splitBatch('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch too large"}}'), undefined, 'one error object for the whole batch')
  t.equal(splitBatch('[{"id":1}'), undefined, 'cut short')
  t.equal(batchHeadId('[{"jsonrpc":"2.0","id":41,"result":"0x1"},{"id":42}]'), 41)
  t.equal(batchHeadId('{"id":41}'), undefined)
})

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const { pools, httpNode, wsNode, wsOpened } = await httpAndWsPools(t, anvil)

t.test('a batch is answered call by call, in order, with the client ids', async (t) => {
  t.ok(wsOpened, 'the node WebSocket opens')
  const calls = [
    { method: 'eth_chainId', params: [], idJson: '"a"' },
    { method: 'eth_getBalance', params: ['not an address'], idJson: '2' },
    { method: 'web3_clientVersion', params: [], idJson: 'null' },
    { method: 'eth_blockNumber', params: [], idJson: '"ünï"' },
  ]
  const version = await rawRpc(anvil.url, '{"jsonrpc":"2.0","id":null,"method":"web3_clientVersion","params":[]}')
  for (const [label, pool] of Object.entries(pools)) {
    const node = label === 'ws' ? wsNode : httpNode
    const before = { ws: node.counters.wsCalls, http: node.counters.httpCalls }
    const replies = await pool.callBatch('full', calls, { timeoutMs: 5_000 })
    t.equal(replies.length, 4, label)
    t.same(JSON.parse(replies[0]!.text), { jsonrpc: '2.0', id: 'a', result: '0x7a69' }, `${label}: first`)
    t.equal(replies[1]!.isError, true, `${label}: the node's error is flagged`)
    t.equal(JSON.parse(replies[1]!.text).id, 2)
    t.equal(replies[2]!.text, version, `${label}: the node's bytes, id null as the client wrote it`)
    t.equal(JSON.parse(replies[3]!.text).id, 'ünï')
    const after = { ws: node.counters.wsCalls, http: node.counters.httpCalls }
    t.same(label === 'ws' ? after.ws - before.ws : after.http - before.http, 4, `${label}: carried over its own transport`)
  }
})

t.test('eth_sendRawTransaction is left for call(), so that it keeps its own failover rules', async (t) => {
  const replies = await pools.ws.callBatch(
    'full',
    [
      { method: 'eth_sendRawTransaction', params: ['0x00'], idJson: '1' },
      { method: 'eth_chainId', params: [], idJson: '2' },
    ],
    { timeoutMs: 5_000 },
  )
  t.equal(replies[0], undefined)
  t.equal(JSON.parse(replies[1]!.text).result, '0x7a69')
})

t.test('an answer given to another client carries its id, and the first keeps its own', async (t) => {
  for (const [label, pool] of Object.entries(pools)) {
    const reply = await pool.call({ kind: 'full', method: 'eth_chainId', params: [], idJson: '"first"', timeoutMs: 5_000 })
    // Small answers are text (bytes are kept from 16 KiB on: bench/README.md).
    t.equal(reply.bytes, undefined, `${label}: a small answer is text`)
    const other = reply.withId('"second"')
    t.equal(other.text, '{"jsonrpc":"2.0","id":"second","result":"0x7a69"}', `${label}: the other client's id`)
    t.equal(reply.text, '{"jsonrpc":"2.0","id":"first","result":"0x7a69"}', `${label}: the first is untouched`)
    t.same([other.node, other.kind, other.isError], [reply.node, reply.kind, reply.isError], `${label}: the same node's answer`)
  }
})

// Merging a batch's identical calls is the dispatcher's (test/gateway/batch-copies.test.ts): the
// pool sends what it is given, and each call keeps its own id.
t.test('identical calls given to the pool are each answered with its own id', async (t) => {
  const before = wsNode.counters.calls
  const replies = await pools.ws.callBatch(
    'full',
    [
      { method: 'eth_chainId', params: [], idJson: '1' },
      { method: 'eth_chainId', params: [], idJson: '"two"' },
      { method: 'net_version', params: [], idJson: '3' },
      { method: 'eth_chainId', params: [], idJson: '4' },
    ],
    { timeoutMs: 5_000 },
  )
  t.equal(wsNode.counters.calls - before, 4, 'the four calls sent as given')
  t.same(
    replies.map((r) => JSON.parse(r!.text).id),
    [1, 'two', 3, 4],
  )
  t.same(
    replies.map((r) => JSON.parse(r!.text).result),
    ['0x7a69', '0x7a69', '31337', '0x7a69'],
  )
})
