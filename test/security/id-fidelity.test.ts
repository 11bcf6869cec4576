import t from 'tap'
import WebSocket from 'ws'
import { anvilGateway } from '../helpers/anvil-gateway.js'

// JSON-RPC requires the answer's id to be the request's id; a gateway that parses the id and
// writes it out again changes it (an id above 2^53 rounded, 1e3 as 1000, -0 as 0, escapes
// decoded). Through a real gateway to a real anvil, the answer carries the id's bytes as sent.

const {
  tg,
  key: { apiKey },
} = await anvilGateway(t, { anvil: { chainId: 1 } })
const url = `${tg.url('eth-1')}?apikey=${apiKey}`

/** Ids as JSON text, each different from what JSON.parse + JSON.stringify would give back. */
const IDS = [
  '12345678901234567890123',
  '9007199254740993',
  '1e3',
  '1E+2',
  '-0',
  '1.50',
  '0.1000',
  '-12.5e-3',
  '"\\u0041"',
  '"a\\/b"',
  '"\\ud83d\\ude00"',
  '"\\ud800"',
  '"tab\\there"',
  '"ünï ✓"',
  '"\\"quoted\\""',
]

async function post(body: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  return { status: res.status, text: await res.text() }
}

t.test('over HTTP, whatever the layout of the request, the id comes back as its bytes', async (t) => {
  for (const id of IDS) {
    const layouts = [
      `{"jsonrpc":"2.0","id":${id},"method":"eth_chainId","params":[]}`,
      `{"method":"eth_chainId","params":[],"id":${id},"jsonrpc":"2.0"}`,
      `{"method":"eth_chainId","params":[],"jsonrpc":"2.0","id":${id}}`,
      ` { "jsonrpc" : "2.0" , "method" : "eth_chainId" , "id" : ${id} , "params" : [ ] } \n`,
      `{"jsonrpc":"2.0","id":"first","method":"eth_chainId","id":${id}}`,
    ]
    for (const body of layouts) {
      const r = await post(body)
      t.equal(r.status, 200)
      t.equal(r.text, `{"jsonrpc":"2.0","id":${id},"result":"0x1"}`, body)
    }
  }
})

t.test('errors the gateway writes itself carry the id as sent too', async (t) => {
  const notFound = await post('{"jsonrpc":"2.0","id":1e3,"method":"nope_nothing","params":[]}')
  t.match(notFound.text, /^\{"jsonrpc":"2\.0","id":1e3,"error":\{"code":-32601,/)
  const badParams = await post('{"jsonrpc":"2.0","id":-0,"method":"eth_chainId","params":"x"}')
  t.match(badParams.text, /^\{"jsonrpc":"2\.0","id":-0,"error":\{"code":-32600,/)
})

t.test('in a batch, each answer carries its own id as sent', async (t) => {
  const calls = IDS.map((id) => `{"jsonrpc":"2.0","id":${id},"method":"eth_chainId","params":[]}`)
  const r = await post(`[${calls.join(' , ')}]`)
  t.equal(r.status, 200)
  t.equal(r.text, `[${IDS.map((id) => `{"jsonrpc":"2.0","id":${id},"result":"0x1"}`).join(',')}]`)
})

t.test('over WebSocket too', async (t) => {
  const ws = new WebSocket(`${tg.wsUrl('eth-1')}?apikey=${apiKey}`)
  t.teardown(() => ws.terminate())
  await new Promise((r) => ws.once('open', r))
  const texts: string[] = []
  ws.on('message', (data) => texts.push(data.toString()))
  for (const id of IDS) {
    ws.send(`{"method":"eth_chainId","params":[],"id":${id},"jsonrpc":"2.0"}`)
    await new Promise((r) => ws.once('message', r))
  }
  t.same(
    texts,
    IDS.map((id) => `{"jsonrpc":"2.0","id":${id},"result":"0x1"}`),
  )
})

t.test('a string id with bytes that are not UTF-8 is -32600 with id null', async (t) => {
  const body = Buffer.from('{"jsonrpc":"2.0","id":"x\xfe","method":"eth_chainId","params":[]}', 'latin1')
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: new Uint8Array(body) })
  t.equal(res.status, 200)
  t.same(await res.json(), {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message: 'Invalid Request: the id is not valid UTF-8, so it cannot be echoed; JSON text must be UTF-8 (RFC 8259); send the body encoded as UTF-8',
    },
  })
})
