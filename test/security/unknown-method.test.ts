import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { startNginx } from '../helpers/nginx.js'
import { RawConnection } from '../helpers/raw-http.js'

// An HTTP method the gateway's parser does not know (FOO, PROPFIND, PURGE), on a real gateway and
// anvil behind a real nginx with the config of docs/fleet.md (src/dev/nginx-config.ts).
// - The gateway alone cannot answer it: uWebSockets.js v20.30 closes the connection inside its
//   parser, before any route (its `any` routes included) sees the request. That is pinned here,
//   as a fact of the platform (SECURITY.md, "Known limits of the platform").
// - Behind nginx it was worse: nginx passes any method on, the instance closed the connection,
//   nginx tried the next one and answered 502 with its own HTML page. Now nginx answers it itself,
//   501 with a JSON-RPC error, and the keep-alive connection serves the next call.

const {
  tg,
  key: { apiKey },
} = await anvilGateway(t, { anvil: { chainId: 1 }, nodeWs: false })
const gatewayPort = Number(new URL(tg.gateway.http).port)
const nginx = await startNginx([`127.0.0.1:${gatewayPort}`])
t.teardown(() => nginx.stop())
const nginxPort = Number(new URL(nginx.url).port)
const call = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'
const METHODS = ['FOO', 'PROPFIND', 'PURGE', 'MKCOL', 'QUERY']

t.test('behind nginx: 501 with a JSON-RPC error, and the connection serves the next call', async (t) => {
  const conn = await RawConnection.open(nginxPort)
  t.teardown(() => conn.destroy())
  for (const method of METHODS) {
    for (const path of ['/http/eth-1', '/ws/eth-1', '/healthz', '/']) {
      conn.send(method, path, { 'Content-Type': 'application/json' }, call)
      const answer = await conn.read()
      t.equal(answer.status, 501, `${method} ${path}`)
      t.match(answer.headers['content-type'], /^application\/json/, `${method} ${path}: JSON`)
      t.same(
        JSON.parse(answer.body),
        {
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32019,
            message: 'HTTP method not implemented: the gateway takes GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS and TRACE; send JSON-RPC with POST',
          },
        },
        `${method} ${path}: the error`,
      )
    }
    conn.send('POST', `/http/eth-1?apikey=${apiKey}`, { 'Content-Type': 'application/json' }, call)
    const next = await conn.read()
    t.same([next.status, JSON.parse(next.body)], [200, { jsonrpc: '2.0', id: 1, result: '0x1' }], `after ${method}, a call on the same connection is served`)
  }
  conn.send('PATCH', '/http/eth-1', { 'Content-Type': 'application/json' }, call)
  const known = await conn.read()
  t.equal(known.status, 405, "a method the gateway knows still gets the gateway's own answer")
  t.match(known.headers.allow, /POST/)
})

t.test('the gateway alone closes that connection unanswered (uWebSockets.js), and serves others', async (t) => {
  const conn = await RawConnection.open(gatewayPort)
  t.teardown(() => conn.destroy())
  conn.write('FOO /http/eth-1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
  t.ok(await conn.waitClosed(), 'closed')
  t.equal(conn.unread, '', 'unanswered')
  const next = await RawConnection.open(gatewayPort)
  t.teardown(() => next.destroy())
  next.send('POST', `/http/eth-1?apikey=${apiKey}`, { 'Content-Type': 'application/json' }, call)
  t.equal((await next.read()).status, 200)
})
