import { METHODS } from '../../src/rpc/method-table.js'
import t from 'tap'
import { parseUnits } from 'viem'
import { startAnvil } from '../../harness/anvil.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { DashboardClient } from '../helpers/dashboard-client.js'
import { anvilAccount, chainAt, deployToken, transferToken } from '../helpers/contracts.js'
import { until } from '../helpers/eventually.js'

/*
 * The dashboard's JSON API on a real gateway over a real anvil with a real ERC-20: sign-in and
 * its cookie, the free trial (once), a key that works, the domain allowlist on the HTTP path,
 * regenerating with and without grace, paying for Tier 1, hourly usage, and the CSRF guard.
 */
const anvil = await startAnvil({ chainId: 31337 })
t.teardown(() => anvil.stop())
const chain = chainAt(anvil.url)
const token = await deployToken(chain, anvilAccount(0))
const treasury = '0x000000000000000000000000000000000000bEEF'
const alice = anvilAccount(1)
await transferToken(chain, token, anvilAccount(0), alice.address, parseUnits('1000', 18))

const tg = await startTestGateway(t, {
  networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, ws: anvil.wsUrl, kind: 'full' }] } },
  usageIntervalMs: 100,
  config: { payments: { network: 'eth-1', token, treasury, confirmations: 1 } },
})
const base = tg.gateway.http
const call = (key: string, headers: Record<string, string> = {}) =>
  rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }, { bearer: key, headers })

t.test('without a session the account API says to sign in; the public config is there', async (t) => {
  const c = new DashboardClient(base)
  const me = await c.get('/api/me')
  t.equal(me.status, 401)
  t.equal(me.json.error.code, 'NOT_SIGNED_IN')
  const config = await c.get('/api/config')
  t.equal(config.status, 200)
  t.same(config.json.siwe, { domain: new URL(base).host, origin: base, sessionTtlMs: 86_400_000 })
  t.same(config.json.payments, { network: 'eth-1', chainId: 31337, token: token.toLowerCase(), treasury: treasury.toLowerCase(), confirmations: 1 })
  t.same(
    config.json.plans.map((p: { id: string; how: string }) => `${p.id}:${p.how}`),
    ['free-trial:free', 'tier-1:pay', 'tier-2:pay', 'tier-3:pay', 'private:request'],
  )
})

t.test('state-changing calls from another origin or without JSON are refused', async (t) => {
  const c = new DashboardClient(base)
  const foreign = await c.call('POST', '/api/siwe/nonce', {}, { origin: 'https://evil.example.com' })
  t.equal(foreign.status, 403)
  t.equal(foreign.json.error.code, 'WRONG_ORIGIN')
  const form = await fetch(`${base}/api/siwe/nonce`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1' })
  t.equal(form.status, 403)
})

const c = new DashboardClient(base)

t.test('sign-in sets an HttpOnly SameSite session cookie with an expiry', async (t) => {
  const out = await c.signIn(alice, 31337)
  t.equal(out.status, 200, JSON.stringify(out.json))
  t.match(
    c.setCookie,
    /^tg_session=[0-9a-z]+\.[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{16}; Path=\/; Max-Age=(599|600); HttpOnly; SameSite=Strict$/,
    "not Secure on plain http on loopback; it ends with the message's Expiration Time (10 minutes)",
  )
  const me = await c.get('/api/me')
  t.equal(me.json.wallet, alice.address.toLowerCase())
  t.equal(me.json.plan, null)
  t.equal(me.json.key, null)
})

let firstKey = ''
t.test('the free trial gives a key that works, once per wallet', async (t) => {
  const taken = await c.post('/api/plans', { planId: 'free-trial' })
  t.same(taken.json, { activated: true })
  const me = (await c.get('/api/me')).json
  t.equal(me.plan.id, 'free-trial')
  t.equal(me.plan.endsAt - me.plan.startsAt, 86_400_000)
  t.same(me.freePlansUsed, ['free-trial'])
  t.same(
    me.endpoints.map((e: { network: string; http: string }) => [e.network, e.http]),
    [['eth-1', `${base}/http/eth-1`]],
  )
  firstKey = me.key.apiKey
  const answer = await call(firstKey)
  t.equal(answer.status, 200)
  t.match(answer.json.result, /^0x/)
  const again = await c.post('/api/plans', { planId: 'free-trial' })
  t.equal(again.status, 409)
  t.equal(again.json.error.code, 'FREE_PLAN_USED')
})

t.test('a domain allowlist refuses other origins on the HTTP path', async (t) => {
  const saved = await c.put('/api/keys/domains', { domains: ['https://App.Example.com/path', '*.example.org'] })
  t.same(saved.json, { domains: ['app.example.com', '*.example.org'] })
  t.equal((await call(firstKey, { origin: 'https://app.example.com' })).status, 200)
  t.equal((await call(firstKey, { origin: 'https://www.example.org' })).status, 200)
  t.equal((await call(firstKey, { referer: 'https://app.example.com/page' })).status, 200, 'Referer when there is no Origin')
  const evil = await call(firstKey, { origin: 'https://evil.example.com' })
  t.equal(evil.status, 403)
  t.equal(evil.json.error.code, -32003)
  t.match(evil.json.error.message, /only be used from app\.example\.com, \*\.example\.org/)
  t.equal(evil.headers.get('access-control-allow-origin'), '*', 'a browser can read why')
  t.equal((await call(firstKey)).status, 403, 'a restricted key is a browser key: no Origin, no call')
  t.same((await c.put('/api/keys/domains', { domains: [] })).json, { domains: [] })
  t.equal((await call(firstKey)).status, 200, 'lifted')
  t.equal((await c.put('/api/keys/domains', { domains: ['not a domain!'] })).json.error.code, 'BAD_DOMAINS')
})

t.test('paying for Tier 1 changes the plan and keeps the key', async (t) => {
  const chosen = await c.post('/api/plans', { planId: 'tier-1', nodes: [{ network: 'eth-1', kind: 'full' }] })
  t.equal(chosen.status, 200, JSON.stringify(chosen.json))
  const invoice = chosen.json.invoice
  t.equal(invoice.amountUsd, '50')
  t.equal(invoice.status, 'unpaid')
  const txHash = await transferToken(chain, token, alice, treasury as `0x${string}`, BigInt(invoice.amount))
  const paid = await c.post(`/api/invoices/${invoice.invoiceId}/payment`, { txHash })
  t.equal(paid.status, 200, JSON.stringify(paid.json))
  t.equal(paid.json.invoice.status, 'active')
  const me = (await c.get('/api/me')).json
  t.equal(me.plan.id, 'tier-1')
  t.same(me.nodes, [{ network: 'eth-1', kind: 'full' }])
  t.equal(me.key.apiKey, firstKey, 'the key stays')
  const notFound = await c.post(`/api/invoices/${invoice.invoiceId}/payment`, { txHash: '0x' + '00'.repeat(32) })
  t.equal(notFound.json.error.code, 'INVOICE_PAID')
})

t.test('regenerating: with a grace period the old key works until it ends; at once it stops', async (t) => {
  // The hour runs from the regeneration: between the times the request was sent and answered,
  // whatever the machine's speed (before, it had to come within 100 s of this line).
  const askedAt = Date.now()
  const grace = await c.post('/api/keys/regenerate', { graceSeconds: 3600 })
  const answeredAt = Date.now()
  t.equal(grace.status, 200)
  const me = (await c.get('/api/me')).json
  t.not(me.key.apiKey, firstKey)
  t.equal(me.previousKey.ending, firstKey.slice(-6))
  const { worksUntil } = me.previousKey
  t.ok(worksUntil >= askedAt + 3_600_000 && worksUntil <= answeredAt + 3_600_000, 'the old key works until an hour after the regeneration')
  t.equal((await call(firstKey)).status, 200, 'the old key still works during the grace period')
  t.equal((await call(me.key.apiKey)).status, 200)

  const now = await c.post('/api/keys/regenerate', { graceSeconds: 0 })
  t.equal(now.status, 200)
  const after = (await c.get('/api/me')).json
  const old = await call(me.key.apiKey)
  t.equal(old.status, 401, 'the regenerated key is refused at once')
  t.equal((await call(after.key.apiKey)).status, 200)
  t.equal((await c.post('/api/keys/regenerate', { graceSeconds: -1 })).json.error.code, 'BAD_GRACE')
})

t.test('usage shows calls and units per hour by network and node kind', async (t) => {
  const me = (await c.get('/api/me')).json
  for (let i = 0; i < 3; i++) await call(me.key.apiKey)
  // Usage reaches the projection through the outbox and the log: wait for it, bounded.
  let usage: any
  await until(async () => {
    usage = (await c.get('/api/usage?hours=24')).json
    return usage.series.reduce((n: number, s: { requests: number[] }) => n + s.requests.reduce((a, b) => a + b, 0), 0) >= 11
  })
  t.equal(usage.hours, 24)
  t.equal(usage.series.length, 1)
  t.match(usage.series[0], { network: 'eth-1', kind: 'full' })
  t.equal(usage.series[0].requests.length, 24)
  t.ok(usage.series[0].requests[23] >= 11, `this hour counts the calls made (${usage.series[0].requests[23]})`)
  t.equal(usage.series[0].units[23], usage.series[0].requests[23] * METHODS.eth_blockNumber!.cost, 'and their compute units (all eth_blockNumber)')
})

t.test('signing out ends the session on the server, not only in the browser', async (t) => {
  // The client forgets its cookie when told Max-Age=0: the same token sent again after the
  // logout is what shows that the gateway ended the session (a stolen copy is worth nothing).
  const token = c.cookie
  t.equal((await c.get('/api/me')).status, 200, 'the session works before the logout')
  t.equal((await c.post('/api/siwe/logout')).status, 200)
  t.match(c.setCookie, /^[\w-]+=; Path=\/; Max-Age=0;/, 'the browser is told to drop the cookie')
  const replay = new DashboardClient(base)
  replay.cookie = token
  const me = await replay.get('/api/me')
  t.equal(me.status, 401, 'the old token is refused')
  t.equal(me.json.error.code, 'NOT_SIGNED_IN')
  t.same((await replay.get('/api/session')).json, { signedIn: false })
})
