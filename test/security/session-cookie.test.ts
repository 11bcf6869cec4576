import t from 'tap'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startApiGateway } from '../helpers/api-gateway.js'
import { waitFor } from '../helpers/eventually.js'

// The session cookie and how long a session lasts, on real gateway processes. Before: the cookie
// had no `__Host-` prefix and was Secure only with an https publicUrl (over plain http on a
// public address it crossed the network readable), and a session lasted sessionTtlMs whatever the
// signed message's Expiration Time said.

const COOKIE = /^__Host-tg_session=[0-9a-z]+\.[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{16}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Strict; Secure$/

t.test('behind TLS (an https publicUrl): a __Host- cookie, Secure, read under that name only', async (t) => {
  const tls = await startApiGateway(t, { publicUrl: 'https://dash.example.test' })
  const out = await tls.signIn(privateKeyToAccount(generatePrivateKey()))
  t.equal(out.status, 200, 'signed in')
  t.match(out.setCookie, COOKIE, 'no Domain (the prefix forbids one), Path=/, Secure')
  const me = (cookie: string) => tls.call(tls.freshIp(), 'GET', '/api/me', undefined, cookie)
  t.equal((await me(out.cookie)).status, 200)
  const token = out.cookie.slice(out.cookie.indexOf('=') + 1)
  t.equal((await me(`tg_session=${token}`)).status, 401, 'a cookie without the prefix (one a sibling domain could set) is not read')

  t.test("the session ends at the message's Expiration Time", async (t) => {
    const EXPIRES_IN_MS = 4_000
    const signedAt = Date.now()
    const short = await tls.signIn(privateKeyToAccount(generatePrivateKey()), { expiresInMs: EXPIRES_IN_MS })
    // The message's Expiration Time is written during the sign-in: at most EXPIRES_IN_MS after it
    // returned, however long it took (before, a sign-in slower than a second failed this).
    const signedBy = Date.now()
    t.equal(short.status, 200)
    t.ok(short.json.expiresAt <= signedBy + EXPIRES_IN_MS, `expiresAt ${short.json.expiresAt - signedAt} ms after the sign-in began, not sessionTtlMs`)
    t.ok(Number(/Max-Age=(\d+)/.exec(short.setCookie)![1]) <= EXPIRES_IN_MS / 1000, 'the cookie goes with it')
    t.equal((await me(short.cookie)).status, 200)
    await waitFor(async () => (await me(short.cookie)).status === 401, 'the session to end', 30_000)
    t.pass('refused once the message expired')
  })
})

t.test('plain http on a public address: Secure all the same (the browser will not send it over http)', async (t) => {
  const plain = await startApiGateway(t, { publicUrl: 'http://203.0.113.10:8080' })
  const out = await plain.signIn(privateKeyToAccount(generatePrivateKey()))
  t.equal(out.status, 200, 'signed in')
  t.match(out.setCookie, COOKIE)
})
