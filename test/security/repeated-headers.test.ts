import t, { type Test } from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { RawConnection } from '../helpers/raw-http.js'
import { tryUpgrade } from '../helpers/ws-client.js'

// A request that says a thing twice where it may say it once, on a real gateway and a real anvil,
// over raw sockets (fetch merges repeated headers into one before sending them).
// - Two Content-Length headers: uWS cut the body at the first and served the call, leaving the
//   rest of the body on the connection as the start of a new request. Behind a proxy that reads
//   the other length, that is request smuggling. Now 400 and the connection closed.
// - Two keys (two Authorization headers, two ?apikey=) were served with the first: the client
//   cannot know which key is charged. Now 401, like ?apikey= and Bearer naming different keys.

const { tg, key: one } = await anvilGateway(t, { anvil: { chainId: 1 } })
const port = Number(new URL(tg.gateway.http).port)
const other = await tg.createKey('tier-3')
const call = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'
const SERVED = { jsonrpc: '2.0', id: 1, result: '0x1' }

/** Write a request exactly as given (`head` lines without the request line's CRLF end) and read one answer. */
async function raw(
  t: Test,
  requestLine: string,
  headers: string[],
  body = '',
): Promise<{ conn: RawConnection; answer: Awaited<ReturnType<RawConnection['read']>> }> {
  const conn = await RawConnection.open(port)
  t.teardown(() => conn.destroy())
  conn.write(`${requestLine}\r\nHost: 127.0.0.1\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n${body}`)
  return { conn, answer: await conn.read() }
}

t.test('two Content-Length headers: 400 with a JSON-RPC error, the connection closed', async (t) => {
  const { conn, answer } = await raw(
    t,
    `POST /http/eth-1?apikey=${one.apiKey} HTTP/1.1`,
    ['Content-Type: application/json', `Content-Length: ${call.length}`, `Content-Length: ${call.length + 10}`],
    call,
  )
  t.equal(answer.status, 400)
  t.same(JSON.parse(answer.body), {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32018,
      message: 'Bad request: more than one Content-Length header, so where the body ends is ambiguous; send one Content-Length (the connection is closed)',
    },
  })
  t.equal(answer.headers.connection, 'close')
  t.ok(await conn.waitClosed(), 'the gateway closed the connection')
})

t.test('a request hidden past the first length is never served, and the connection closes', async (t) => {
  // The first length covers the call; the second covers the call and a request hidden after it,
  // as a proxy in front reading the second one would forward it. Before, uWS answered the call
  // (200) and then the hidden request (here /healthz, 200) on the same connection.
  const hidden = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
  const conn = await RawConnection.open(port)
  t.teardown(() => conn.destroy())
  conn.write(
    `POST /http/eth-1?apikey=${one.apiKey} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${call.length}\r\nContent-Length: ${call.length + hidden.length}\r\n\r\n${call}${hidden}`,
  )
  t.ok(await conn.waitClosed(), 'the gateway closed the connection')
  // uWS closes it unanswered when the hidden request came in the same read as the call, and after
  // the 400 when it came later: either way no 200, for the call or the hidden request.
  t.notMatch(conn.unread, /HTTP\/1\.1 200/, 'nothing was served')
  t.match(conn.unread, /^(HTTP\/1\.1 400 [\s\S]*"code":-32018[\s\S]*)?$/s, 'at most the 400')
})

t.test('two equal Content-Length headers are refused too, on every route', async (t) => {
  for (const path of [`/http/eth-1?apikey=${one.apiKey}`, '/http/nope-9', '/healthz', '/api/config', '/no/such/path']) {
    const { conn, answer } = await raw(t, `POST ${path} HTTP/1.1`, [`Content-Length: ${call.length}`, `Content-Length: ${call.length}`], call)
    t.equal(answer.status, 400, `POST ${path}`)
    t.equal(JSON.parse(answer.body).error.code, -32018, `POST ${path}`)
    t.ok(await conn.waitClosed(), `POST ${path}: closed`)
  }
  const upgrade = await tryUpgrade(`${tg.wsUrl('eth-1')}?apikey=${one.apiKey}`, { 'Content-Length': ['0', '0'] as unknown as string })
  t.equal(upgrade.status, 400, 'a WebSocket upgrade with two lengths')
})

t.test('Content-Length with Transfer-Encoding never reaches the gateway: uWS closes the connection unanswered', async (t) => {
  // Pinned, not built: uWebSockets.js refuses the pair in its parser (either order) and closes the
  // socket without an answer, so no length can be chosen wrong. Nothing of the request is served.
  for (const order of [
    ['Content-Length: 3', 'Transfer-Encoding: chunked'],
    ['Transfer-Encoding: chunked', 'Content-Length: 3'],
  ]) {
    const conn = await RawConnection.open(port)
    t.teardown(() => conn.destroy())
    conn.write(
      `POST /http/eth-1?apikey=${one.apiKey} HTTP/1.1\r\nHost: 127.0.0.1\r\n${order.join('\r\n')}\r\n\r\n${call.length.toString(16)}\r\n${call}\r\n0\r\n\r\n`,
    )
    t.ok(await conn.waitClosed(), `${order.join(', ')}: closed`)
    t.equal(conn.unread, '', `${order.join(', ')}: unanswered`)
  }
})

const conflict = (what: string) => ({
  jsonrpc: '2.0',
  id: null,
  error: { code: -32001, message: `Conflicting keys: the request names more than one key (${what}); send one key, in one place, once` },
})

t.test('two Authorization headers naming different keys: 401; the same key twice is served', async (t) => {
  const length = `Content-Length: ${call.length}`
  const two = await raw(t, 'POST /http/eth-1 HTTP/1.1', [`Authorization: Bearer ${one.apiKey}`, `Authorization: Bearer ${other.apiKey}`, length], call)
  t.equal(two.answer.status, 401)
  t.same(JSON.parse(two.answer.body), conflict('two Authorization headers name different keys'))
  const junk = await raw(t, 'POST /http/eth-1 HTTP/1.1', [`Authorization: Bearer ${one.apiKey}`, 'Authorization: Basic eDp5', length], call)
  t.equal(junk.answer.status, 401, 'also when the second one is not a key at all')
  const same = await raw(t, 'POST /http/eth-1 HTTP/1.1', [`Authorization: Bearer ${one.apiKey}`, `Authorization: Bearer ${one.apiKey}`, length], call)
  t.same([same.answer.status, JSON.parse(same.answer.body)], [200, SERVED])
})

t.test('two ?apikey= naming different keys: 401; the same key twice is served', async (t) => {
  const length = `Content-Length: ${call.length}`
  const two = await raw(t, `POST /http/eth-1?apikey=${one.apiKey}&apikey=${other.apiKey} HTTP/1.1`, [length], call)
  t.equal(two.answer.status, 401)
  t.same(JSON.parse(two.answer.body), conflict('two ?apikey= name different keys'))
  const emptyFirst = await raw(t, `POST /http/eth-1?apikey=&apikey=${other.apiKey} HTTP/1.1`, [length], call)
  t.equal(emptyFirst.answer.status, 401, 'an empty one and a key are two different keys')
  const same = await raw(t, `POST /http/eth-1?apikey=${one.apiKey}&x=1&apikey=${one.apiKey} HTTP/1.1`, [length], call)
  t.same([same.answer.status, JSON.parse(same.answer.body)], [200, SERVED])
  const lookalike = await raw(t, `POST /http/eth-1?xapikey=${other.apiKey}&apikey=${one.apiKey} HTTP/1.1`, [length], call)
  t.same([lookalike.answer.status, JSON.parse(lookalike.answer.body)], [200, SERVED], 'another parameter ending in apikey is not a key')
})

t.test('on the WebSocket upgrade: the same refusals', async (t) => {
  const query = await tryUpgrade(`${tg.wsUrl('eth-1')}?apikey=${one.apiKey}&apikey=${other.apiKey}`)
  t.same([query.status, query.body], [401, conflict('two ?apikey= name different keys')])
  const headers = await tryUpgrade(tg.wsUrl('eth-1'), { Authorization: [`Bearer ${one.apiKey}`, `Bearer ${other.apiKey}`] as unknown as string })
  t.same([headers.status, headers.body], [401, conflict('two Authorization headers name different keys')])
  const same = await tryUpgrade(`${tg.wsUrl('eth-1')}?apikey=${one.apiKey}&apikey=${one.apiKey}`)
  t.equal(same.status, 101)
})
