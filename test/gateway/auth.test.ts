import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { generateApiKey } from '../../src/keys/api-key.js'

const {
  url,
  key: { apiKey },
} = await anvilGateway(t, { nodeWs: false, plan: 'tier-1', keyNodes: [{ network: 'eth-1', kind: 'full' }] })
const call = { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }

t.test('the key works as ?apikey= and as Authorization: Bearer', async (t) => {
  const q = await rpc(url, call, { apiKey })
  t.equal(q.status, 200)
  t.match(q.json.result, /^0x/)
  const b = await rpc(url, call, { bearer: apiKey })
  t.equal(b.status, 200)
  t.match(b.json.result, /^0x/)
})

t.test('?apikey= is found among other parameters, percent-encoded or not, and not inside another name', async (t) => {
  const post = (query: string) => rpc(`${url}?${query}`, call)
  t.equal((await post(`chain=1&apikey=${apiKey}&x=2`)).status, 200, 'between other parameters')
  t.equal((await post(`apikey=${apiKey}&x=2`)).status, 200, 'first, with more after it')
  const escaped = [...apiKey].map((c) => '%' + c.charCodeAt(0).toString(16).padStart(2, '0')).join('')
  t.equal((await post(`apikey=${escaped}`)).status, 200, 'every character percent-encoded')
  const other = await post(`xapikey=${apiKey}`)
  t.equal(other.status, 401, 'xapikey= is not the key')
  t.equal(other.json.error.code, -32001)
  t.equal((await post(`xapikey=nope&apikey=${apiKey}`)).status, 200, 'the key after a parameter whose name ends in apikey')
  t.equal((await post('apikey=')).status, 401, 'an empty key is no key')
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
