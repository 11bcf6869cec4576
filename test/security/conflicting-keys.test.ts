import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { tryUpgrade } from '../helpers/ws-client.js'

// A request that names two different keys (?apikey= and Authorization: Bearer) is refused: the
// gateway must not pick one silently, charging a key its owner did not mean to use.

const { tg, key: one } = await anvilGateway(t, { anvil: { chainId: 1 } })
const other = await tg.createKey('tier-3')
const call = { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }
const CONFLICT = {
  jsonrpc: '2.0',
  id: null,
  error: {
    code: -32001,
    message: 'Conflicting keys: the request names more than one key (?apikey= and Authorization: Bearer differ); send one key, in one place, once',
  },
}

t.test('over HTTP: two different keys are 401 conflicting keys; the same key twice is served', async (t) => {
  const conflict = await rpc(tg.url('eth-1'), call, { apiKey: one.apiKey, bearer: other.apiKey })
  t.equal(conflict.status, 401)
  t.same(conflict.json, CONFLICT)
  const unknownBesideValid = await rpc(tg.url('eth-1'), call, { apiKey: one.apiKey, bearer: 'tg_not_a_key' })
  t.same(unknownBesideValid.json, CONFLICT, 'also when one of them is no key at all')
  const same = await rpc(tg.url('eth-1'), call, { apiKey: one.apiKey, bearer: one.apiKey })
  t.same([same.status, same.json], [200, { jsonrpc: '2.0', id: 1, result: '0x1' }])
})

t.test('on the WebSocket upgrade: the same refusal, and no socket opened', async (t) => {
  const conflict = await tryUpgrade(`${tg.wsUrl('eth-1')}?apikey=${one.apiKey}`, { Authorization: `Bearer ${other.apiKey}` })
  t.equal(conflict.status, 401)
  t.same(conflict.body, CONFLICT)
  const same = await tryUpgrade(`${tg.wsUrl('eth-1')}?apikey=${one.apiKey}`, { Authorization: `Bearer ${one.apiKey}` })
  t.equal(same.status, 101)
})
