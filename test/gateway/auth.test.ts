import t from 'tap'
import { startAnvil } from '../helpers/anvil.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { generateApiKey } from '../../src/keys/api-key.js'

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const tg = await startTestGateway(t, {
  networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full' }] } },
})
const url = tg.url('eth-1')
const call = { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }
const { apiKey } = await tg.createKey('tier-1', [{ network: 'eth-1', kind: 'full' }])

t.test('the key works as ?apikey= and as Authorization: Bearer', async (t) => {
  const q = await rpc(url, call, { apiKey })
  t.equal(q.status, 200)
  t.match(q.json.result, /^0x/)
  const b = await rpc(url, call, { bearer: apiKey })
  t.equal(b.status, 200)
  t.match(b.json.result, /^0x/)
})

t.test('a missing key gets 401 saying how to pass one', async (t) => {
  const r = await rpc(url, call)
  t.equal(r.status, 401)
  t.equal(r.json.error.code, -32001)
  t.match(r.json.error.message, /apikey=.*Authorization: Bearer/)
})

t.test('a malformed key gets 401', async (t) => {
  const r = await rpc(url, call, { apiKey: apiKey.slice(0, -1) + (apiKey.endsWith('a') ? 'b' : 'a') })
  t.equal(r.status, 401)
  t.match(r.json.error.message, /format|copy/)
})

t.test('a well-formed key this gateway never issued gets 401', async (t) => {
  const r = await rpc(url, call, { bearer: generateApiKey().key })
  t.equal(r.status, 401)
  t.equal(r.json.error.code, -32001)
})

t.test('a 401 keeps the connection usable', async (t) => {
  for (let i = 0; i < 3; i++) t.equal((await rpc(url, call, { apiKey: 'nope' })).status, 401)
  t.equal((await rpc(url, call, { apiKey })).status, 200)
})
