import t, { type Test } from 'tap'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'
import { waitFor } from '../helpers/eventually.js'
import { postHead, rawConnect, type RawConnection } from '../helpers/raw-socket.js'

// Hostile input over HTTP against a real gateway and a real anvil: each attack gets a clear
// answer (or a closed socket where HTTP allows nothing else), and a normal call made while it
// runs, and after it, is answered 200 with the right result.

// The dashboard's folder, with a file beside it that no request may reach.
const site = await mkdtemp(join(tmpdir(), 'tollgate-site-'))
t.teardown(() => rm(site, { recursive: true, force: true }))
const SECRET = 'secret-beside-the-dashboard-7f3a'
await mkdir(join(site, 'dashboard', 'assets'), { recursive: true })
await writeFile(join(site, 'dashboard', 'index.html'), '<!doctype html><title>dashboard</title>')
await writeFile(join(site, 'dashboard', 'assets', 'app-1.js'), 'console.log("app")')
await writeFile(join(site, 'secret.txt'), SECRET)
await writeFile(join(site, 'dashboard', 'assets', '..secret.txt'), 'a file whose name starts with two dots is still inside')

const BODY_TIMEOUT_MS = 1000
const {
  key: { apiKey },
  url,
} = await anvilGateway(t, {
  anvil: { chainId: 1 },
  limits: { bodyTimeoutMs: BODY_TIMEOUT_MS },
  dashboardDir: join(site, 'dashboard'),
})
const port = Number(new URL(url).port)
const rpcPath = `/http/eth-1?apikey=${apiKey}`

/** A normal call: 200 and anvil's chain id, whatever else is going on. */
async function served(t: Test, when: string): Promise<void> {
  const r = await rpc(url, { jsonrpc: '2.0', id: 'normal', method: 'eth_chainId', params: [] }, { apiKey })
  t.equal(r.status, 200, `a normal call ${when}: 200`)
  t.same(r.json, { jsonrpc: '2.0', id: 'normal', result: '0x1' }, `a normal call ${when}: the right result`)
}

/** POST raw bytes with fetch (which keeps them as they are). */
async function postBytes(body: Buffer | string): Promise<{ status: number; text: string; json: any }> {
  const res = await fetch(`${url}?apikey=${apiKey}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  })
  const text = await res.text()
  return { status: res.status, text, json: JSON.parse(text) }
}

t.test('a JSON body nested 100,000 deep is refused at once; others are served', async (t) => {
  const deepArray = '['.repeat(100_000) + ']'.repeat(100_000)
  const deepParams = `{"jsonrpc":"2.0","id":1,"method":"eth_call","params":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`
  const deepObject = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`
  const [array, params, object] = await Promise.all([postBytes(deepArray), postBytes(deepParams), postBytes(deepObject), served(t, 'during the attack')])
  t.equal(array.status, 200)
  t.equal(array.json.length, 1, 'a batch of one entry, itself an array')
  t.same(array.json[0].error.code, -32600)
  t.equal(params.status, 200)
  t.equal(params.json.id, 1)
  t.equal(params.json.error.code, -32600, 'params nested too deep: refused before any node sees them (not a 502 that counts against the node)')
  t.equal(params.json.error.message, 'Invalid Request: "params" are nested more than 64 levels deep; no method takes that')
  t.equal(object.json.error.code, -32600)
  t.equal(object.json.id, null)
  await served(t, 'after it')
})

t.test('a batch of 10,000 calls is refused as the registry says, before any is forwarded', async (t) => {
  const batch = JSON.stringify(Array.from({ length: 10_000 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_chainId', params: [] })))
  const [r] = await Promise.all([postBytes(batch), served(t, 'during the attack')])
  t.equal(r.status, 413)
  t.same(r.json, {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32011, message: 'Batch too large: 10000 calls, at most 100 are accepted in one batch; split it into several requests' },
  })
  await served(t, 'after it')
})

/** The 408 of the body time-out, and the socket closed by the gateway. */
async function timedOut(t: Test, c: RawConnection, got: RegExp): Promise<void> {
  const r = await c.response()
  t.ok(r, 'answered before the socket closed')
  t.match(c.received(), /^HTTP\/1\.1 408 Request Timeout\r\n/)
  t.equal(r?.headers.connection, 'close')
  const body = JSON.parse(r!.body)
  t.equal(body.error.code, -32015)
  t.match(body.error.message, got)
  t.match(body.error.message, /within 1000 ms \(limits\.bodyTimeoutMs\); send the whole body right after the headers$/)
  await c.closed
  t.ok(c.closedByServer(), 'the gateway closed the connection')
}

t.test('a Content-Length larger than what is sent: 408 once the client stalls, and the socket is closed', async (t) => {
  const c = await rawConnect(port)
  t.teardown(() => c.socket.destroy())
  c.write(postHead(rpcPath, { 'Content-Length': 1000 }) + '{"jsonrpc":')
  await Promise.all([timedOut(t, c, /^Request body not received in time: 11 of the 1000 bytes announced arrived/), served(t, 'while the client stalls')])
  await served(t, 'after it')
})

t.test('a body sent slowly: 408 after the time-out; one declared over the limit: 413 at once', async (t) => {
  const slow = await rawConnect(port)
  t.teardown(() => slow.socket.destroy())
  // Chunked, no Content-Length: 64 KiB every 100 ms, and never more than 15 chunks (960 KiB), so
  // the body stays under the 1 MiB limit however late the gateway's time-out fires on a loaded
  // machine: only the time-out can end it (before, a time-out later than 1.6 s met a 413).
  slow.write(postHead(rpcPath, { 'Transfer-Encoding': 'chunked' }))
  const chunk = `10000\r\n${' '.repeat(0x10000)}\r\n`
  let chunks = 0
  const timer = setInterval(() => {
    if (chunks < 15) slow.write(chunk)
    chunks++
  }, 100)
  t.teardown(() => clearInterval(timer))
  await Promise.all([timedOut(t, slow, /^Request body not received in time: \d+ bytes arrived/), served(t, 'while it trickles in')])
  clearInterval(timer)

  const declared = await rawConnect(port)
  t.teardown(() => declared.socket.destroy())
  declared.write(postHead(rpcPath, { 'Content-Length': 2 * 1024 * 1024 }) + ' '.repeat(1000))
  const r = await declared.response()
  t.equal(r?.status, 413)
  t.equal(JSON.parse(r!.body).error.code, -32010)
  await declared.closed
  t.ok(declared.closedByServer(), 'closed: the rest of the body is never read')
  await served(t, 'after both')
})

t.test('500 slowloris sockets (headers a byte a second) do not stop normal calls, and are closed', async (t) => {
  const head = 'POST /http/eth-1 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ' + 'a'.repeat(200)
  const sockets: RawConnection[] = []
  for (let i = 0; i < 500; i++) sockets.push(await rawConnect(port))
  t.teardown(() => {
    for (const s of sockets) s.socket.destroy()
  })
  // Byte after byte of the head on every socket: the first now, then one a second.
  let sent = 0
  const dripByte = () => {
    for (const s of sockets) s.write(head[sent % head.length])
    sent++
  }
  dripByte()
  const drip = setInterval(dripByte, 1000)
  t.teardown(() => clearInterval(drip))
  // Two normal calls after each of the first five drips: the calls are spread over the attack by
  // its own steps (a byte written on every socket), not by a sleep: about five seconds of the
  // attack, inside the 10 s uWebSockets.js gives a request's headers.
  for (let i = 0; i < 10; i++) {
    const drips = Math.floor(i / 2) + 1
    await waitFor(() => sent >= drips + 1, `drip ${drips} of the slowloris bytes`)
    await served(t, `while 500 sockets drip headers (${i + 1} of 10)`)
  }
  // uWebSockets.js gives a request's headers 10 s (checked every 4 s) before it closes the socket.
  // The 30 s is an outer bound, so that the test cannot hang on a socket never closed; the
  // assertion is that the gateway closed them, not how fast.
  const closedAll = await Promise.race([
    Promise.all(sockets.map((s) => s.closed)).then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), 30_000).unref()),
  ])
  clearInterval(drip)
  t.ok(closedAll, 'every slowloris socket was closed by the gateway')
  t.equal(sockets.filter((s) => s.closedByServer()).length, 500)
  t.equal(sockets.filter((s) => s.received() !== '').length, 0, 'none was answered: the headers never ended')
  await served(t, 'after it')
})

t.test('bytes that are not UTF-8, a NUL, a BOM: each a clear error', async (t) => {
  // Written as Latin-1: each character below 0x100 is the one byte it names ('\xff' is the byte FF).
  const request = (id: string, params = '[]', method = 'eth_chainId') =>
    Buffer.from(`{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}`, 'latin1')
  const badId = await postBytes(request('"a\xffb"'))
  t.equal(badId.status, 200)
  t.same(badId.json, {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message: 'Invalid Request: the id is not valid UTF-8, so it cannot be echoed; JSON text must be UTF-8 (RFC 8259); send the body encoded as UTF-8',
    },
  })
  const badParams = await postBytes(request('7', '["0x\xc0\xaf","latest"]', 'eth_getBalance'))
  t.same(badParams.json, {
    jsonrpc: '2.0',
    id: 7,
    error: {
      code: -32600,
      message: 'Invalid Request: the request contains bytes that are not valid UTF-8; JSON text must be UTF-8 (RFC 8259); send the body encoded as UTF-8',
    },
  })
  // A UTF-16 surrogate written as UTF-8 (ED A0 80) is not UTF-8 either.
  const batch = await postBytes(Buffer.concat([Buffer.from('['), request('"s\xed\xa0\x80"'), Buffer.from(','), request('"ok"'), Buffer.from(']')]))
  t.equal(batch.json.length, 2)
  t.same(batch.json[0].id, null)
  t.same(batch.json[0].error.code, -32600)
  t.same(batch.json[1], { jsonrpc: '2.0', id: 'ok', result: '0x1' }, 'the valid call of the batch is served')
  const notJson = await postBytes(Buffer.from([0xff, 0xfe, 0x00, 0x7b]))
  t.same(notJson.json.error, {
    code: -32700,
    message: 'Parse error: the body is not valid JSON, nor UTF-8: JSON text must be UTF-8 (RFC 8259); send the body encoded as UTF-8',
  })
  t.equal(notJson.json.id, null)

  const nul = await postBytes('{"jsonrpc":"2.0","id":1,"method":"eth_chainId\u0000","params":[]}')
  t.equal(nul.json.error.code, -32700, 'a raw NUL inside a string is not JSON')
  t.match(nul.json.error.message, /^Parse error: the body is not valid JSON \(Bad control character in string literal/)
  const escapedNul = await postBytes('{"jsonrpc":"2.0","id":1,"method":"eth_chainId\\u0000","params":[]}')
  t.equal(escapedNul.json.error.code, -32601, 'an escaped NUL is JSON: a method that does not exist')

  const bom = await postBytes(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), request('1')]))
  t.same(bom.json, {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32700,
      message: 'Parse error: the body is not valid JSON: it starts with a byte order mark (EF BB BF); send the JSON without it (RFC 8259, section 8.1)',
    },
  })
  await served(t, 'after them')
})

t.test('an object as id is -32600; a 100 KB string id is -32600; 256 characters are echoed', async (t) => {
  const object = await rpc(url, { jsonrpc: '2.0', id: { a: 1 }, method: 'eth_chainId', params: [] }, { apiKey })
  t.same(object.json, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: "id" must be a string, a number or null' } })
  const long = await rpc(url, { jsonrpc: '2.0', id: 'x'.repeat(100_000), method: 'eth_chainId', params: [] }, { apiKey })
  t.equal(long.status, 200)
  t.same(long.json, {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32600,
      message:
        'Invalid Request: the id is 100002 characters long, at most 256 are accepted; an id only pairs an answer with its request (a counter or a UUID is enough)',
    },
  })
  t.ok(long.text.length < 300, 'the answer does not carry the id back')
  const longest = 'y'.repeat(254)
  const ok = await rpc(url, { jsonrpc: '2.0', id: longest, method: 'eth_chainId', params: [] }, { apiKey })
  t.same(ok.json, { jsonrpc: '2.0', id: longest, result: '0x1' })
  await served(t, 'after them')
})

t.test('keys with CR/LF or 10 KB long: 401 with a clear message, nothing echoed', async (t) => {
  const cases: Array<[string, string]> = [
    ['CR/LF in ?apikey=', postHead('/http/eth-1?apikey=tg_abc%0D%0AX-Injected:%20yes', { 'Content-Length': 2 })],
    ['CR/LF after the key in Authorization', postHead('/http/eth-1', { Authorization: 'Bearer tg_abc\r\nX-Injected: yes', 'Content-Length': 2 })],
    ['10 KB key in ?apikey=', postHead(`/http/eth-1?apikey=tg_${'k'.repeat(10_000)}`, { 'Content-Length': 2 })],
    ['10 KB key in Authorization', postHead('/http/eth-1', { Authorization: `Bearer tg_${'k'.repeat(10_000)}`, 'Content-Length': 2 })],
  ]
  for (const [label, head] of cases) {
    const c = await rawConnect(port)
    c.write(head + '{}')
    const r = await c.response()
    c.socket.destroy()
    t.equal(r?.status, 401, label)
    t.notOk('x-injected' in (r?.headers ?? {}), `${label}: no header was injected`)
    const body = JSON.parse(r!.body)
    t.equal(body.error.code, -32001, label)
    t.equal(
      body.error.message,
      'Invalid API key: it is not in the format this gateway issues (tg_ followed by 38 letters and digits); check for a copy/paste error',
      label,
    )
    t.notMatch(r!.body, /tg_abc|kkkk|Injected/, `${label}: the key is not echoed`)
  }
  await served(t, 'after them')
})

t.test("the dashboard's static files: no path leads outside its folder", async (t) => {
  /** GET with the path exactly as written (fetch would resolve `..` itself). */
  const get = async (path: string) => {
    const c = await rawConnect(port)
    c.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
    const r = await c.response()
    c.socket.destroy()
    return r
  }
  t.equal((await get('/'))?.status, 200, 'the page itself is served')
  t.equal((await get('/assets/app-1.js'))?.body, 'console.log("app")')
  const attempts = [
    '/../secret.txt',
    '/assets/../../secret.txt',
    '/assets/../index.html',
    '/%2e%2e/secret.txt',
    '/assets/%2e%2e/%2e%2e/secret.txt',
    '/..%2fsecret.txt',
    '/assets/..%2f..%2fsecret.txt',
    '/%2e%2e%2fsecret.txt',
    '/..\\secret.txt',
    '/assets\\..\\..\\secret.txt',
    '/%2e%2e%5csecret.txt',
    '//secret.txt',
    '/assets/%252e%252e/%252e%252e/secret.txt',
    `/assets/..${'%c0%af'}..${'%c0%af'}secret.txt`,
    '/assets/..secret.txt/../../secret.txt',
  ]
  for (const path of attempts) {
    const r = await get(path)
    t.equal(r?.status, 404, path)
    t.notMatch(r?.body ?? '', SECRET, `${path}: not the file outside`)
  }
  await served(t, 'after them')
})
