import t from 'tap'
import { createServer, type Server } from 'node:http'
import { freePort } from '../../harness/free-port.js'
import { HttpTransport } from '../../src/upstream/http-transport.js'
import { listenLocal } from '../helpers/listen-local.js'
import { UpstreamAnswerTooLarge, UpstreamTimeout, UpstreamTransportError } from '../../src/upstream/errors.js'

// Faults that sit in front of a node (a proxy's error page, a JSON error with a 5xx status,
// nothing listening): a plain HTTP server stands for the proxy. Anvil itself is tested elsewhere.

const BODY = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'
const replies: Record<string, { status: number; type: string; body: string }> = {
  '/html': { status: 502, type: 'text/html', body: '<html><body>502 Bad Gateway</body></html>' },
  '/json-error': { status: 500, type: 'application/json', body: '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"x"}}' },
  '/empty': { status: 200, type: 'application/json', body: '' },
  '/truncated': { status: 200, type: 'application/json', body: '{"jsonrpc":"2.0","id":1,"result":{"number":"0x1"' },
  '/big': { status: 200, type: 'application/json', body: `{"jsonrpc":"2.0","id":1,"result":"0x${'a'.repeat(2000)}"}` },
}
const server: Server = createServer((req, res) => {
  req.resume()
  if (req.url === '/hang') return // never answers
  const r = replies[req.url ?? ''] ?? { status: 404, type: 'text/plain', body: 'no' }
  res.writeHead(r.status, { 'content-type': r.type, 'content-length': Buffer.byteLength(r.body) }).end(r.body)
})
const listener = await listenLocal(server, 'the misbehaving node')
const base = `http://127.0.0.1:${listener.port}`
const transports: HttpTransport[] = []
const transport = (path: string, maxBytes?: number) => {
  const h = new HttpTransport(base + path, { name: 'proxy', maxBytes })
  transports.push(h)
  return h
}
t.teardown(async () => {
  await Promise.all(transports.map((h) => h.close().catch(() => {})))
  await listener.close()
})

t.test('a non-JSON error page is a transport failure', async (t) => {
  const err = await transport('/html')
    .call(BODY, 2_000)
    .then(
      () => undefined,
      (e: unknown) => e,
    )
  t.type(err, UpstreamTransportError)
  t.match((err as Error).message, /HTTP 502/)
  t.equal((err as UpstreamTransportError).requestSent, true)
  await t.rejects(transport('/empty').call(BODY, 2_000), UpstreamTransportError, 'an empty 200 too')
})

t.test('an answer cut off is a transport failure, not an answer', async (t) => {
  const err = await transport('/truncated')
    .call(BODY, 2_000)
    .then(
      () => undefined,
      (e: unknown) => e,
    )
  t.type(err, UpstreamTransportError)
  t.equal((err as UpstreamTransportError).what, 'HTTP 200 with a truncated JSON body (48 bytes, without its closing })')
})

t.test('an answer over the limit, refused from its Content-Length', async (t) => {
  const err = await transport('/big', 1_000)
    .call(BODY, 2_000)
    .then(
      () => undefined,
      (e: unknown) => e,
    )
  t.type(err, UpstreamAnswerTooLarge)
  t.equal((err as UpstreamAnswerTooLarge).what, 'an answer of 2038 bytes, over the limit of 1000')
  t.equal(await transport('/big', 2_038).call(BODY, 2_000), replies['/big'].body, 'at the limit it is read')
})

t.test('a JSON answer is the node speaking, whatever the status', async (t) => {
  t.equal(await transport('/json-error').call(BODY, 2_000), replies['/json-error'].body)
})

t.test('no answer within the time-out', async (t) => {
  const started = Date.now()
  await t.rejects(transport('/hang').call(BODY, 200), UpstreamTimeout)
  t.ok(Date.now() - started >= 190)
})

t.test('connection refused: known not sent', async (t) => {
  const h = new HttpTransport(`http://127.0.0.1:${await freePort()}`)
  transports.push(h)
  const err = await h.call(BODY, 2_000).then(
    () => undefined,
    (e: unknown) => e,
  )
  t.type(err, UpstreamTransportError)
  t.notOk(err instanceof UpstreamTimeout)
  t.equal((err as UpstreamTransportError).requestSent, false)
})
