import t from 'tap'
import { randomBytes } from 'node:crypto'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startApiGateway } from '../helpers/api-gateway.js'
import { jetStreamApiCalls } from '../../harness/nats-server.js'

// A session cookie the gateway never issued must be refused without the event log. Before session
// tokens were signed, any unknown token of 20-100 characters made the API catch the projections up
// with the log (a JetStream STREAM.INFO), on every route: 300 made-up cookies cost 301 JetStream
// API calls, and while NATS was down each was a 500 and an error line in the log. A real gateway
// process on a real nats-server whose monitoring endpoint counts the JetStream API calls.

const JUNK = 300
const { gw, nats, freshIp, call, signIn } = await startApiGateway(t)
const getWith = (path: string, cookie: string) => call(freshIp(), 'GET', path, undefined, cookie)

const junkCookie = (i: number): string => `tg_session=${randomBytes(16 + (i % 40)).toString('base64url')}`
const errorLines = (): number => gw.logs.filter((l) => l.level >= 50).length

t.test(`${JUNK} made-up session cookies cost no JetStream API call`, async (t) => {
  const routes = ['/api/session', '/api/me', '/api/usage']
  const before = await jetStreamApiCalls(nats)
  const statuses = new Map<string, number>()
  for (let i = 0; i < JUNK; i++) {
    const path = routes[i % routes.length]!
    const { status } = await getWith(path, junkCookie(i))
    const what = `${path} ${status}`
    statuses.set(what, (statuses.get(what) ?? 0) + 1)
  }
  const calls = (await jetStreamApiCalls(nats)) - before
  t.same(Object.fromEntries(statuses), { '/api/session 200': JUNK / 3, '/api/me 401': JUNK / 3, '/api/usage 401': JUNK / 3 }, 'all signed out')
  // The gateway's own background work (its follower, its heartbeat) makes a few calls meanwhile.
  t.ok(calls < JUNK / 10, `${calls} JetStream API calls for ${JUNK} junk cookies (before: one or more each)`)
})

t.test('while NATS is down, a signed-out session is a 503 that says so, without an error line; junk is a 401', async (t) => {
  const { status, cookie } = await signIn(privateKeyToAccount(generatePrivateKey()))
  t.equal(status, 200)
  t.equal((await getWith('/api/me', cookie)).status, 200, 'signed in')
  t.equal((await call(freshIp(), 'POST', '/api/siwe/logout', {}, cookie)).status, 200)
  t.equal((await getWith('/api/me', cookie)).status, 401, 'signed out')
  const errorsBefore = errorLines()
  await nats.kill()
  t.teardown(() => nats.restart())
  for (let i = 0; i < 10; i++) {
    const out = await getWith('/api/me', cookie)
    t.equal(out.status, 503, 'the session cannot be looked up in the log: try again later')
    t.equal(out.json.error.code, 'EVENT_LOG_UNAVAILABLE')
    t.match(out.json.error.message, /try again/)
  }
  for (let i = 0; i < 10; i++) t.equal((await getWith('/api/me', junkCookie(i))).status, 401, 'a cookie we did not issue needs no log')
  t.equal(errorLines(), errorsBefore, 'no error line per request')
})
