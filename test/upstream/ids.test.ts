import t from 'tap'
import { rawRpc, startAnvil } from '../../harness/anvil.js'
import { httpAndWsPools } from '../helpers/upstream-pool.js'

// The client's id comes back exactly as the client wrote it, and nothing else of the node's
// answer changes; under WebSocket multiplexing each answer reaches its own caller.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const { pools, httpNode, wsNode, wsOpened } = await httpAndWsPools(t, anvil)
t.ok(wsOpened, 'the node WebSocket opens')

const CLIENT_IDS = ['1', '0', '-5', '9007199254740993', '"abc"', '"a\\"b\\\\c"', '""', '"ünï ✓"', '"0x1"', 'null']

t.test('every kind of id is spliced exactly', async (t) => {
  const reference = await rawRpc(anvil.url, '{"jsonrpc":"2.0","id":7,"method":"web3_clientVersion","params":[]}')
  t.match(reference, /^\{"jsonrpc":"2\.0","id":7,/)
  for (const [label, pool] of Object.entries(pools)) {
    for (const idJson of CLIENT_IDS) {
      const reply = await pool.call({ kind: 'full', method: 'web3_clientVersion', params: [], idJson, timeoutMs: 5_000 })
      t.equal(reply.text, reference.replace('"id":7,', `"id":${idJson},`), `${label}: id ${idJson}`)
      if (idJson !== 'null') {
        // anvil itself, asked with the same id, answers the same bytes
        const direct = await rawRpc(anvil.url, `{"jsonrpc":"2.0","id":${idJson},"method":"web3_clientVersion","params":[]}`)
        t.equal(reply.text, direct, `${label}: id ${idJson} as anvil answers it`)
      }
    }
  }
})

t.test('an error answer keeps the client id and is flagged, not thrown', async (t) => {
  for (const [label, pool] of Object.entries(pools)) {
    const reply = await pool.call({ kind: 'full', method: 'eth_getBalance', params: ['not an address'], idJson: '"e1"', timeoutMs: 5_000 })
    t.equal(reply.isError, true, label)
    const answer = JSON.parse(reply.text)
    t.equal(answer.id, 'e1')
    t.type(answer.error.code, 'number')
  }
  t.equal(httpNode.counters.failures + wsNode.counters.failures, 0, 'a JSON-RPC error is not a node failure')
})

t.test('concurrent calls over one WebSocket each get their own answer', async (t) => {
  const inputs = Array.from({ length: 60 }, (_, i) => '0x' + i.toString(16).padStart(4, '0'))
  const expected = await Promise.all(inputs.map(async (data) => (await anvil.rpc('web3_sha3', [data])).result))
  const before = wsNode.counters.wsCalls
  const replies = await Promise.all(
    inputs.map((data, i) => pools.ws.call({ kind: 'full', method: 'web3_sha3', params: [data], idJson: `"c${i}"`, timeoutMs: 5_000 })),
  )
  t.equal(wsNode.counters.wsCalls - before, inputs.length, 'all went over the socket')
  replies.forEach((reply, i) => {
    const answer = JSON.parse(reply.text)
    t.equal(answer.id, `c${i}`)
    t.equal(answer.result, expected[i])
  })
})
