import t from 'tap'
import { SignJWT, exportJWK, exportSPKI, generateKeyPair } from 'jose'
import { generateKeyPairSync } from 'node:crypto'
import { startAnvil } from '../../harness/anvil.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'
import { DashboardClient } from '../helpers/dashboard-client.js'
import { anvilAccount } from '../helpers/contracts.js'
import { within } from '../helpers/eventually.js'

/*
 * Signed tokens from the dashboard's JSON API on a real gateway over a real anvil: a public key
 * registered (PEM, JWK), refused (private key), listed in /api/me, removed; the key made to
 * require a token, and a call with a token signed for it.
 */
const anvil = await startAnvil({ chainId: 31337 })
t.teardown(() => anvil.stop())
const tg = await startTestGateway(t, { networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, ws: anvil.wsUrl, kind: 'full' }] } } })
const c = new DashboardClient(tg.gateway.http)
const blockNumber = { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }

t.test('register, list, require, call with a token, remove', async (t) => {
  t.equal((await c.signIn(anvilAccount(2), 31337)).status, 200)
  t.same((await c.post('/api/plans', { planId: 'free-trial' })).json, { activated: true })
  const { publicKey, privateKey } = await generateKeyPair('EdDSA', { extractable: true })
  const added = await c.post('/api/keys/jwt', { kid: 'web-1', alg: 'EdDSA', publicKey: await exportSPKI(publicKey) })
  t.same(added.json, { jwtKeys: [{ kid: 'web-1', alg: 'EdDSA' }] })
  const es = await generateKeyPair('ES256', { extractable: true })
  const byJwk = await c.post('/api/keys/jwt', { kid: 'web-2', alg: 'ES256', publicKey: await exportJWK(es.publicKey) })
  t.equal(byJwk.status, 200, 'a JWK object')
  const priv = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' })
  const refused = await c.post('/api/keys/jwt', { kid: 'web-3', alg: 'EdDSA', publicKey: priv })
  t.equal(refused.status, 400)
  t.equal(refused.json.error.code, 'BAD_JWT_KEY')
  t.match(refused.json.error.message, /private key/)

  const me = (await c.get('/api/me')).json
  t.same(me.jwtKeys, [
    { kid: 'web-1', alg: 'EdDSA' },
    { kid: 'web-2', alg: 'ES256' },
  ])
  t.equal(me.key.tokenRequired, false)
  t.same((await c.put('/api/keys/token-required', { required: true })).json, { tokenRequired: true })
  t.equal((await c.get('/api/me')).json.key.tokenRequired, true)

  const url = tg.url('eth-1')
  t.ok((await within(10_000, async () => (await rpc(url, blockNumber, { bearer: me.key.apiKey })).status === 403)) !== undefined, 'the key alone is refused')
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'EdDSA', kid: 'web-1' })
    .setSubject(me.key.keyId)
    .setAudience('tollgate')
    .setExpirationTime('5m')
    .sign(privateKey)
  const served = await rpc(url, blockNumber, { bearer: token })
  t.equal(served.status, 200)
  t.match(served.json.result, /^0x/)

  t.same((await c.post('/api/keys/jwt/remove', { kid: 'web-1' })).json, { jwtKeys: [{ kid: 'web-2', alg: 'ES256' }] })
  t.ok((await within(10_000, async () => (await rpc(url, blockNumber, { bearer: token })).status === 401)) !== undefined, 'its tokens stop passing')
  t.match((await rpc(url, blockNumber, { bearer: token })).json.error.message, /kid "web-1" is not registered/)
  const unknown = await c.post('/api/keys/jwt/remove', { kid: 'web-1' })
  t.equal(unknown.status, 400)
  t.match(unknown.json.error.message, /not registered/)
})
