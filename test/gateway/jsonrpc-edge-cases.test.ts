import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { wsRpc } from '../helpers/ws-rpc.js'

// JSON-RPC 2.0 as the spec says, checked through the real gateway against a real anvil.
const {
  anvil,
  tg,
  key: { apiKey },
  url,
} = await anvilGateway(t, { limits: { maxBatch: 5, maxBodyBytes: 4096 } })
const chainId = (await anvil.rpc('eth_chainId')).result

t.test('ids are echoed exactly: number, string, null, zero, large', async (t) => {
  for (const id of [1, 0, -7, 1.5, 9007199254740991, 'abc', '', 'ü"quoted"', null]) {
    const r = await rpc(url, { jsonrpc: '2.0', id, method: 'eth_chainId', params: [] }, { apiKey })
    t.equal(r.status, 200)
    t.same(r.json, { jsonrpc: '2.0', id, result: chainId }, `id ${JSON.stringify(id)}`)
  }
})

t.test('invalid JSON gets -32700 with id null', async (t) => {
  const r = await rpc(url, '{"jsonrpc":"2.0","id":1,', { apiKey })
  t.equal(r.status, 200)
  t.equal(r.json.error.code, -32700)
  t.equal(r.json.id, null)
  t.match(r.json.error.message, /Parse error/)
})

t.test('bad request objects get -32600', async (t) => {
  const cases: Array<[unknown, unknown]> = [
    [{ id: 1, method: 'eth_chainId', params: [] }, 1], // no jsonrpc
    [{ jsonrpc: '1.0', id: 2, method: 'eth_chainId' }, 2],
    [{ jsonrpc: '2.0', id: 3, params: [] }, 3], // no method
    [{ jsonrpc: '2.0', id: 4, method: 42 }, 4],
    [{ jsonrpc: '2.0', id: 5, method: 'eth_chainId', params: 'x' }, 5],
    [{ jsonrpc: '2.0', id: { a: 1 }, method: 'eth_chainId' }, null], // bad id: answered with null
    ['42', null],
    ['"text"', null],
    ['true', null],
  ]
  for (const [body, id] of cases) {
    const r = await rpc(url, body, { apiKey })
    t.equal(r.status, 200)
    t.equal(r.json.error.code, -32600, JSON.stringify(body))
    t.equal(r.json.id, id)
  }
})

t.test('an empty batch is answered by one -32600 error', async (t) => {
  const r = await rpc(url, [], { apiKey })
  t.equal(r.status, 200)
  t.notOk(Array.isArray(r.json))
  t.equal(r.json.error.code, -32600)
})

t.test('a batch is handled call by call', async (t) => {
  const r = await rpc(
    url,
    [
      { jsonrpc: '2.0', id: 'a', method: 'eth_chainId', params: [] },
      { jsonrpc: '2.0', id: 'b', method: 'nope_nothing', params: [] },
      { id: 'c', method: 'eth_chainId' },
      1,
      { jsonrpc: '2.0', method: 'eth_chainId', params: [] }, // notification: no answer
    ],
    { apiKey },
  )
  t.equal(r.status, 200)
  t.equal(r.json.length, 4)
  t.same(r.json[0], { jsonrpc: '2.0', id: 'a', result: chainId })
  t.equal(r.json[1].id, 'b')
  t.equal(r.json[1].error.code, -32601)
  t.equal(r.json[2].id, 'c')
  t.equal(r.json[2].error.code, -32600)
  t.equal(r.json[3].id, null)
  t.equal(r.json[3].error.code, -32600)
})

t.test('notifications are answered by nothing', async (t) => {
  const single = await rpc(url, { jsonrpc: '2.0', method: 'eth_chainId', params: [] }, { apiKey })
  t.equal(single.status, 204)
  t.equal(single.text, '')
  const batch = await rpc(
    url,
    [
      { jsonrpc: '2.0', method: 'eth_chainId' },
      { jsonrpc: '2.0', method: 'net_version' },
    ],
    { apiKey },
  )
  t.equal(batch.status, 204)
  t.equal(batch.text, '')
})

t.test('a node error is passed through unchanged', async (t) => {
  const direct = await wsRpc(anvil.wsUrl, { jsonrpc: '2.0', id: 9, method: 'eth_getBalance', params: ['0xnotanaddress', 'latest'] })
  t.ok(direct.error, 'anvil answers an error')
  const r = await rpc(url, { jsonrpc: '2.0', id: 9, method: 'eth_getBalance', params: ['0xnotanaddress', 'latest'] }, { apiKey })
  t.equal(r.status, 200)
  t.same(r.json.error, direct.error)
})

t.test('methods that would use the node itself are refused with -32601', async (t) => {
  for (const method of [
    'eth_sendTransaction',
    'eth_sign',
    'admin_peers',
    'anvil_mine',
    'evm_mine',
    'personal_listAccounts',
    'debug_setHead',
    'eth_subscribe',
  ]) {
    const r = await rpc(url, { jsonrpc: '2.0', id: 1, method, params: [] }, { apiKey })
    t.equal(r.json.error.code, -32601, method)
    t.match(r.json.error.message, /not|WebSocket/)
  }
})

t.test('batch longer than the limit gets 413 and says the limit', async (t) => {
  const calls = Array.from({ length: 6 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_chainId', params: [] }))
  const r = await rpc(url, calls, { apiKey })
  t.equal(r.status, 413)
  t.equal(r.json.error.code, -32011)
  t.match(r.json.error.message, /at most 5/)
})

t.test('body larger than the limit gets 413', async (t) => {
  const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'web3_sha3', params: ['0x' + 'ab'.repeat(4000)] })
  const r = await rpc(url, big, { apiKey })
  t.equal(r.status, 413)
  t.equal(r.json.error.code, -32010)
  t.match(r.json.error.message, /at most 4096 bytes/)
})

t.test('unknown network gets 404 naming the served ones', async (t) => {
  const r = await rpc(tg.url('xyz-9'), { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }, { apiKey })
  t.equal(r.status, 404)
  t.match(r.json.error.message, /eth-1/)
})

t.test('GET on an RPC path gets 405, other paths 404', async (t) => {
  const get = await fetch(url)
  t.equal(get.status, 405)
  t.equal(get.headers.get('allow'), 'POST, OPTIONS')
  const other = await fetch(`${tg.gateway.http}/nothing/here`)
  t.equal(other.status, 404)
})

t.test('health, readiness and metrics', async (t) => {
  t.equal((await fetch(`${tg.gateway.http}/healthz`)).status, 200)
  t.equal((await fetch(`${tg.gateway.http}/readyz`)).status, 200)
  t.equal((await fetch(`${tg.gateway.admin}/healthz`)).status, 200, 'the admin listener answers /healthz too')
  t.equal((await fetch(`${tg.gateway.admin}/readyz`)).status, 200, 'and /readyz')
  const metrics = await (await fetch(`${tg.gateway.admin}/metrics`)).text()
  t.match(metrics, /tollgate_http_responses_total\{network="eth-1",status="200"\} \d+/)
  t.equal((await fetch(`${tg.gateway.http}/metrics`)).status, 404, 'no /metrics on the RPC port')
})
