import t, { type Test } from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { runCli } from '../helpers/cli.js'
import { TEST_SECRET } from '../helpers/gateway.js'
import { startGatewayProcess } from '../helpers/gateway-process.js'
import { RawConnection } from '../helpers/raw-http.js'

// Every route answers every method without a key, and the socket stays usable: before this, one
// `OPTIONS /http/eth-1` (the preflight every browser dApp sends) aborted the process, and the
// 204 of a notification carried `Content-Length: 9223372036854775808`.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const gw = await startGatewayProcess(t, { config: { networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full' }] } } } })
const port = Number(new URL(gw.http).port)
const created = await runCli(['accounts', 'create', '--config', gw.configPath, '--wallet', '0x2222222222222222222222222222222222222222', '--plan', 'tier-3'], {
  TOLLGATE_SECRET: TEST_SECRET,
})
const apiKey: string = created.last.apiKey
const blockNumber = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_blockNumber', params: [] })
const expectedBlock = (await anvil.rpc('eth_blockNumber')).result

/** A normal call on the same connection: it must be answered as if nothing came before it. */
async function normalCall(t: Test, conn: RawConnection): Promise<void> {
  conn.send('POST', `/http/eth-1?apikey=${apiKey}`, { 'Content-Type': 'application/json' }, blockNumber)
  const answer = await conn.read()
  t.equal(answer.status, 200, 'the next call on the same socket is served')
  t.same(JSON.parse(answer.body), { jsonrpc: '2.0', id: 7, result: expectedBlock })
}

const ROUTES = [
  '/http/eth-1',
  '/http/nope-9',
  '/ws/eth-1',
  '/healthz',
  '/readyz',
  '/metrics',
  '/api/config',
  '/api/siwe/nonce',
  '/api/me',
  '/api/nope',
  '/',
  '/no/such/path',
]
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE']

t.test('every method on every route is answered, and the socket serves the next call', async (t) => {
  const conn = await RawConnection.open(port)
  t.teardown(() => conn.destroy())
  for (const path of ROUTES) {
    for (const method of METHODS) {
      const body = method === 'POST' || method === 'PUT' || method === 'PATCH' ? '{"x":1}' : undefined
      conn.send(method, path, { 'Content-Type': 'application/json', Origin: 'https://dapp.example' }, body)
      const answer = await conn.read({ head: method === 'HEAD' })
      t.ok(answer.status >= 200 && answer.status < 500, `${method} ${path}: ${answer.status}`)
      if (answer.status === 204) t.equal(answer.headers['content-length'], undefined, `${method} ${path}: a 204 has no Content-Length`)
      if (answer.status === 405) t.match(answer.headers.allow, /[A-Z]/, `${method} ${path}: 405 says what is allowed`)
      if (method === 'HEAD') t.equal(answer.body, '', `${method} ${path}: no body`)
      t.notOk(conn.closed, `${method} ${path}: the connection stays open`)
      await normalCall(t, conn)
    }
  }
})

t.test('the CORS preflight of a browser dApp', async (t) => {
  const conn = await RawConnection.open(port)
  t.teardown(() => conn.destroy())
  conn.send('OPTIONS', '/http/eth-1', {
    Origin: 'https://dapp.example',
    'Access-Control-Request-Method': 'POST',
    'Access-Control-Request-Headers': 'content-type,authorization',
  })
  const answer = await conn.read()
  t.equal(answer.status, 204)
  t.equal(answer.headers['access-control-allow-origin'], '*')
  t.match(answer.headers['access-control-allow-methods'], /POST/)
  t.match(answer.headers['access-control-allow-headers'], /Authorization/)
  t.match(answer.headers['access-control-max-age'], /^\d+$/)
  t.equal(answer.headers['content-length'], undefined)
  await normalCall(t, conn)
})

t.test('HEAD gets the length of the GET body and no body', async (t) => {
  const conn = await RawConnection.open(port)
  t.teardown(() => conn.destroy())
  conn.send('GET', '/healthz')
  const get = await conn.read()
  conn.send('HEAD', '/healthz')
  const head = await conn.read({ head: true })
  t.equal(head.status, 200)
  t.equal(head.headers['content-length'], String(Buffer.byteLength(get.body)))
  t.equal(conn.unread, '', 'nothing after the HEAD answer')
  await normalCall(t, conn)
})

t.test('a notification is answered 204 without Content-Length, and the socket is reused', async (t) => {
  const conn = await RawConnection.open(port)
  t.teardown(() => conn.destroy())
  conn.send('POST', `/http/eth-1?apikey=${apiKey}`, { 'Content-Type': 'application/json' }, '{"jsonrpc":"2.0","method":"eth_blockNumber","params":[]}')
  const answer = await conn.read()
  t.equal(answer.status, 204)
  t.equal(answer.headers['content-length'], undefined)
  await normalCall(t, conn)
})

t.test('a method the HTTP parser does not know closes that connection only', async (t) => {
  const conn = await RawConnection.open(port)
  t.teardown(() => conn.destroy())
  conn.write('FOO /http/eth-1 HTTP/1.1\r\nHost: x\r\n\r\n')
  t.ok(await conn.waitClosed(), 'closed')
  const next = await RawConnection.open(port)
  t.teardown(() => next.destroy())
  await normalCall(t, next)
  t.equal(gw.logs.filter((l) => l.level >= 50).length, 0, 'no error logged')
})

t.test('the admin listener too: every method on each of its routes, and the socket serves the next', async (t) => {
  const conn = await RawConnection.open(Number(new URL(gw.admin).port))
  t.teardown(() => conn.destroy())
  for (const path of ['/metrics', '/healthz', '/readyz', '/http/eth-1', '/no/such/path']) {
    for (const method of METHODS) {
      conn.send(method, path, { 'Content-Type': 'application/json' }, method === 'POST' || method === 'PUT' || method === 'PATCH' ? '{"x":1}' : undefined)
      const answer = await conn.read({ head: method === 'HEAD' })
      t.ok(answer.status >= 200 && answer.status < 500, `${method} ${path}: ${answer.status}`)
      if (answer.status === 405) t.match(answer.headers.allow, /[A-Z]/, `${method} ${path}: 405 says what is allowed`)
      if (method === 'HEAD') t.equal(answer.body, '', `${method} ${path}: no body`)
      conn.send('GET', '/healthz')
      t.equal((await conn.read()).body, 'ok\n', `${method} ${path}: the next request on the socket is answered`)
    }
  }
})

t.test('the process is still the one we started', async (t) => {
  // No race against a 100 ms timer: the admin listener answering now shows the process is alive,
  // and an exit already seen by this process wins the race below (a settled promise listed first).
  const answers = await fetch(`${gw.admin}/healthz`).then(
    (r) => r.ok,
    () => false,
  )
  const exit = await Promise.race([gw.exited, Promise.resolve(answers ? 'running' : 'not answering')])
  t.equal(exit, 'running')
})
