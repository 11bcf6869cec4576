import t from 'tap'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateKeyPairSync } from 'node:crypto'
import { SignJWT, exportSPKI, generateKeyPair, type CryptoKey } from 'jose'
import { createPublicClient, http } from 'viem'
import { FetchRequest, JsonRpcProvider } from 'ethers'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc, TEST_SECRET } from '../helpers/gateway.js'
import { runCli, within } from '../helpers/cli.js'
import { connectWs, tryUpgrade } from '../helpers/ws-client.js'

// Signed tokens end to end: keys registered with the CLI (the events reach the running gateway
// through the shared log), tokens sent over HTTP, by viem and ethers as a dApp would, and over
// WebSocket; a real anvil behind. No clock skew, so that a short token ends when its exp says.
const CHAIN_ID = 31337
const { tg, url, wsUrl, key } = await anvilGateway(t, {
  anvil: { chainId: CHAIN_ID },
  config: { keys: { jwt: { audience: 'tollgate-test', clockSkewSeconds: 0 } } },
})
const env = { TOLLGATE_SECRET: TEST_SECRET }
const dir = mkdtempSync(join(tmpdir(), 'tg-jwt-'))
const jwtCli = (...args: string[]) => runCli(['keys', 'jwt', ...args, '--config', tg.configPath, '--account', key.accountId], env)
const call = (method: string, params: unknown[] = []) => ({ jsonrpc: '2.0', id: 1, method, params })

const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true })
const pemFile = join(dir, 'es256.pem')
writeFileSync(pemFile, await exportSPKI(publicKey))

async function token(claims: Record<string, unknown> = {}, opts: { expIn?: number; sub?: string; signer?: CryptoKey; kid?: string } = {}): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid: opts.kid ?? 'backend-1' })
    .setSubject(opts.sub ?? key.keyId)
    .setAudience('tollgate-test')
    .setExpirationTime(Math.floor(Date.now() / 1000) + (opts.expIn ?? 300))
    .sign(opts.signer ?? privateKey)
}

t.test('a key registered on the command line; a private key, a small RSA key, a fourth key refused', async (t) => {
  const added = await jwtCli('add', '--kid', 'backend-1', '--alg', 'ES256', '--public-key', pemFile)
  t.equal(added.code, 0, added.stderr)
  t.same(added.last, { accountId: key.accountId, jwtKeys: [{ kid: 'backend-1', alg: 'ES256' }] })
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const privFile = join(dir, 'private.pem')
  writeFileSync(privFile, ec.privateKey.export({ type: 'pkcs8', format: 'pem' }))
  const priv = await jwtCli('add', '--kid', 'oops', '--alg', 'ES256', '--public-key', privFile)
  t.equal(priv.code, 1)
  t.match(priv.stderr, /private key; register the public key only/)
  const rsaFile = join(dir, 'rsa1024.pem')
  writeFileSync(rsaFile, generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }))
  const small = await jwtCli('add', '--kid', 'small', '--alg', 'RS256', '--public-key', rsaFile)
  t.equal(small.code, 1)
  t.match(small.stderr, /1024 bits: at least 2048/)
  for (const kid of ['k2', 'k3']) t.equal((await jwtCli('add', '--kid', kid, '--alg', 'ES256', '--public-key', pemFile)).code, 0)
  const fourth = await jwtCli('add', '--kid', 'k4', '--alg', 'ES256', '--public-key', pemFile)
  t.equal(fourth.code, 1)
  t.match(fourth.stderr, /at most 3; remove one first/)
  for (const kid of ['k2', 'k3']) t.equal((await jwtCli('remove', '--kid', kid)).code, 0)
})

t.test('over HTTP: a token stands for its key, alone or beside that key; beside another key it is refused', async (t) => {
  const good = await token()
  const took = await within(10_000, async () => (await rpc(url, call('eth_chainId'), { bearer: good })).status === 200)
  t.ok(took !== undefined, `the registered key reaches the gateway (${took} ms)`)
  const r = await rpc(url, call('eth_chainId'), { bearer: good })
  t.equal(Number(r.json.result), CHAIN_ID)
  t.equal((await rpc(url, call('eth_chainId'), { bearer: good, apiKey: key.apiKey })).status, 200, 'with its own key beside it')
  const other = await tg.createKey('tier-3')
  const conflict = await rpc(url, call('eth_chainId'), { bearer: good, apiKey: other.apiKey })
  t.equal(conflict.status, 401)
  t.match(conflict.json.error.message, /Conflicting keys: the token's sub names another key/)
})

t.test('over HTTP: each bad token is a 401 naming its reason', async (t) => {
  const stranger = await generateKeyPair('ES256')
  const cases: [string, string, RegExp][] = [
    ['expired', await token({}, { expIn: -60 }), /expired/],
    ['unknown kid', await token({}, { kid: 'nope' }), /kid "nope" is not registered/],
    ['another signer', await token({}, { signer: stranger.privateKey }), /signature does not match/],
    [
      'alg none',
      `${Buffer.from('{"alg":"none","kid":"backend-1"}').toString('base64url')}.${(await token()).split('.')[1]}.`,
      /algorithm "none" is not accepted/,
    ],
    ['garbage with dots', 'a.b.c', /not base64url JSON|not a JWT/],
    ['9 KB', `x.${'A'.repeat(9_000)}.y`, /at most 8192 are read/],
  ]
  for (const [name, bad, message] of cases) {
    const r = await rpc(url, call('eth_chainId'), { bearer: bad })
    t.equal(r.status, 401, name)
    t.equal(r.json.error.code, -32001, name)
    t.match(r.json.error.message, message, name)
  }
  // 100 KB of header is refused by the HTTP layer before the gateway reads it (the verifier's own
  // bound is tested in token-verifier.test.ts): the connection is refused, the gateway goes on.
  const huge = await rpc(url, call('eth_chainId'), { bearer: `x.${'A'.repeat(100_000)}.y` }).then(
    (r) => r.status,
    (err: Error) => err.message,
  )
  t.not(huge, 200, `100 KB refused (${huge})`)
  t.equal((await rpc(url, call('eth_chainId'), { bearer: await token() })).status, 200, 'and the gateway serves the next call')
})

t.test("a token narrows the key's methods, contracts and origins, and never widens them", async (t) => {
  const restricted = await runCli(
    ['keys', 'restrict', '--config', tg.configPath, '--account', key.accountId, '--methods', 'eth_chainId,eth_blockNumber,eth_getBalance'],
    env,
  )
  t.equal(restricted.code, 0, restricted.stderr)
  t.ok(
    (await within(10_000, async () => (await rpc(url, call('eth_gasPrice'), { apiKey: key.apiKey })).status === 403)) !== undefined,
    "the key's rule in force",
  )
  const narrow = await token({ methods: ['eth_chainId', 'eth_gasPrice'] })
  const refused = await rpc(url, call('eth_blockNumber'), { bearer: narrow })
  t.match(refused.json.error.message, /Forbidden by the token's method rule/)
  t.equal((await rpc(url, call('eth_chainId'), { bearer: narrow })).status, 200, 'in both lists: served')
  const widen = await rpc(url, call('eth_gasPrice'), { bearer: narrow })
  t.equal(widen.status, 403, "in the token's list only: still refused")
  t.match(widen.json.error.message, /Forbidden by the key's method rule/)

  const contract = `0x${'ab'.repeat(20)}`
  const byContract = await token({ contracts: [contract] })
  t.equal((await rpc(url, call('eth_getBalance', [contract, 'latest']), { bearer: byContract })).status, 200)
  const elsewhere = await rpc(url, call('eth_getBalance', [`0x${'cd'.repeat(20)}`, 'latest']), { bearer: byContract })
  t.equal(elsewhere.status, 403)
  t.match(elsewhere.json.error.message, /Forbidden by the token's contract rule/)

  const fromApp = await token({ origins: ['app.example.com'] })
  t.equal((await rpc(url, call('eth_chainId'), { bearer: fromApp, headers: { origin: 'https://app.example.com' } })).status, 200)
  const evil = await rpc(url, call('eth_chainId'), { bearer: fromApp, headers: { origin: 'https://evil.example' } })
  t.equal(evil.status, 403)
  t.match(evil.json.error.message, /token's origins/)
  t.equal((await runCli(['keys', 'restrict', '--config', tg.configPath, '--account', key.accountId, '--clear'], env)).code, 0)
})

t.test('viem and ethers send a token as a dApp would', async (t) => {
  const jwt = await token()
  const client = createPublicClient({ transport: http(url, { fetchOptions: { headers: { Authorization: `Bearer ${jwt}` } } }) })
  t.equal(await client.getChainId(), CHAIN_ID)
  const req = new FetchRequest(url)
  req.setHeader('Authorization', `Bearer ${jwt}`)
  const provider = new JsonRpcProvider(req, CHAIN_ID, { staticNetwork: true })
  t.equal(Number((await provider.getNetwork()).chainId), CHAIN_ID)
  t.type(await provider.getBlockNumber(), 'number')
  provider.destroy()
})

t.test('over WebSocket: checked at the upgrade (header or ?token=), closed with 1008 at exp', async (t) => {
  const bad = await tryUpgrade(`${wsUrl}`, { authorization: `Bearer ${await token({}, { expIn: -60 })}` })
  t.equal(bad.status, 401)
  t.match(bad.body.error.message, /expired/)
  const byHeader = await connectWs(wsUrl, { headers: { authorization: `Bearer ${await token()}` } })
  t.equal(Number((await byHeader.call(call('eth_chainId'))).result), CHAIN_ID)
  await byHeader.close()
  const byQuery = await connectWs(`${wsUrl}?token=${await token()}`)
  t.equal(Number((await byQuery.call(call('eth_chainId'))).result), CHAIN_ID)
  await byQuery.close()
  const short = await connectWs(wsUrl, { headers: { authorization: `Bearer ${await token({}, { expIn: 2 })}` } })
  t.equal(Number((await short.call(call('eth_chainId'))).result), CHAIN_ID, 'served while the token is valid')
  const closed = await Promise.race([short.closed, new Promise<undefined>((r) => setTimeout(r, 20_000))])
  t.ok(closed !== undefined, 'closed once the token expired')
  t.equal(closed?.code, 1008)
  t.match(closed?.reason ?? '', /Token expired/)
})

t.test('a key that requires a token refuses the key alone, and serves it with a token', async (t) => {
  const on = await jwtCli('require')
  t.equal(on.code, 0, on.stderr)
  t.same(on.last, { accountId: key.accountId, tokenRequired: true })
  t.ok((await within(10_000, async () => (await rpc(url, call('eth_chainId'), { apiKey: key.apiKey })).status === 403)) !== undefined)
  const alone = await rpc(url, call('eth_chainId'), { apiKey: key.apiKey })
  t.equal(alone.json.error.code, -32002)
  t.match(alone.json.error.message, /requires a signed token/)
  t.equal((await tryUpgrade(`${wsUrl}?apikey=${key.apiKey}`)).status, 403, 'over WebSocket too')
  t.equal((await rpc(url, call('eth_chainId'), { bearer: await token() })).status, 200)
  t.equal((await jwtCli('require', '--off')).code, 0)
  t.ok((await within(10_000, async () => (await rpc(url, call('eth_chainId'), { apiKey: key.apiKey })).status === 200)) !== undefined, 'the key alone again')
})
