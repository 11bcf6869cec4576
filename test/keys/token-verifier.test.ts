import t from 'tap'
import fc from 'fast-check'
import { createHmac, generateKeyPairSync } from 'node:crypto'
import { SignJWT, exportSPKI, generateKeyPair, type CryptoKey } from 'jose'
import { GatewayError } from '../../src/errors/registry.js'
import { normalizeJwtKey, type JwtAlg, type JwtPublicKey } from '../../src/keys/jwt-keys.js'
import { TokenVerifier, type TokenOwners } from '../../src/gateway/token-verifier.js'

const KEY_ID = 'key_0123456789abcdef'
const AUD = 'tollgate-test'
const NOW = Date.UTC(2026, 0, 1)

interface Owner {
  keyId: string
  keys: JwtPublicKey[]
  live: boolean
}

async function signer(alg: JwtAlg, kid: string): Promise<{ privateKey: CryptoKey; registered: JwtPublicKey }> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true })
  return { privateKey, registered: normalizeJwtKey({ kid, alg, publicKey: await exportSPKI(publicKey) }) }
}

async function setup(alg: JwtAlg = 'ES256', bounds: { cacheEntries?: number; cacheChars?: number } = {}) {
  const s = await signer(alg, 'k1')
  const owner: Owner = { keyId: KEY_ID, keys: [s.registered], live: true }
  let now = NOW
  let lookups = 0
  const owners: TokenOwners<Owner> = {
    ownerOf: (keyId) => {
      lookups++
      return keyId === KEY_ID ? owner : new GatewayError('INVALID_KEY')
    },
    keysOf: (o) => o.keys,
    current: (o) => o.live,
  }
  const verifier = new TokenVerifier(owners, { audience: AUD, clockSkewSeconds: 30, now: () => now, ...bounds })
  const sign = (claims: Record<string, unknown> = {}, opts: { exp?: number; nbf?: number; aud?: string; kid?: string; sub?: string } = {}) => {
    const jwt = new SignJWT({ ...claims })
      .setProtectedHeader({ alg, kid: opts.kid ?? 'k1' })
      .setSubject(opts.sub ?? KEY_ID)
      .setAudience(opts.aud ?? AUD)
      .setExpirationTime(opts.exp ?? Math.floor(NOW / 1000) + 300)
    if (opts.nbf !== undefined) jwt.setNotBefore(opts.nbf)
    return jwt.sign(s.privateKey)
  }
  return {
    verifier,
    owner,
    sign,
    signer: s,
    setNow: (ms: number) => {
      now = ms
    },
    lookups: () => lookups,
  }
}

async function outcome<O>(v: ReturnType<TokenVerifier<O>['check']>): Promise<string> {
  const r = await v
  return r instanceof GatewayError ? r.code : 'ok'
}

const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url')

for (const alg of ['ES256', 'RS256', 'EdDSA'] as const) {
  t.test(`${alg}: a good token is verified, then answered from the cache without a lookup`, async (t) => {
    const s = await setup(alg)
    const token = await s.sign({ methods: ['eth_call'] })
    const first = await s.verifier.check(token)
    t.notOk(first instanceof GatewayError)
    if (first instanceof GatewayError) return
    t.equal(first.claims.keyId, KEY_ID)
    t.same(first.claims.narrowing, { methods: ['eth_call'] })
    const lookups = s.lookups()
    const again = s.verifier.check(token)
    t.notOk(again instanceof Promise, 'a cached token is answered synchronously')
    t.equal(again, first)
    t.equal(s.lookups(), lookups, 'no owner lookup on a hit')
  })
}

t.test('every bad token of the issue is its own documented refusal', async (t) => {
  const s = await setup('ES256')
  const sec = Math.floor(NOW / 1000)
  const good = await s.sign()
  const [h, p] = good.split('.')
  // alg none: header changed, signature dropped.
  const none = `${b64({ alg: 'none', kid: 'k1' })}.${p}.`
  // Algorithm confusion: HS256 with the registered public key's PEM as the HMAC secret.
  const hsHeader = b64({ alg: 'HS256', kid: 'k1' })
  const hsSig = createHmac('sha256', s.signer.registered.publicKey).update(`${hsHeader}.${p}`).digest('base64url')
  const confusion = `${hsHeader}.${p}.${hsSig}`
  const other = await signer('ES256', 'k1')
  const forged = `${h}.${p}.${
    (
      await new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .setSubject(KEY_ID)
        .setAudience(AUD)
        .setExpirationTime(sec + 300)
        .sign(other.privateKey)
    ).split('.')[2]
  }`
  const cases: [string, string | Promise<string>, string][] = [
    ['malformed (not three parts)', 'abc.def', 'TOKEN_MALFORMED'],
    ['malformed (header not JSON)', `${Buffer.from('nope').toString('base64url')}.${p}.${'A'.repeat(86)}`, 'TOKEN_MALFORMED'],
    ['alg none', none, 'TOKEN_ALG_NOT_ALLOWED'],
    ['HMAC with the public key (algorithm confusion)', confusion, 'TOKEN_ALG_NOT_ALLOWED'],
    ['expired', s.sign({}, { exp: sec - 3600 }), 'TOKEN_EXPIRED'],
    ['not yet valid', s.sign({}, { nbf: sec + 3600 }), 'TOKEN_NOT_YET_VALID'],
    ['wrong audience', s.sign({}, { aud: 'someone-else' }), 'TOKEN_WRONG_AUDIENCE'],
    ['unknown kid', s.sign({}, { kid: 'k9' }), 'TOKEN_UNKNOWN_KID'],
    ['unknown key', s.sign({}, { sub: 'key_nobody' }), 'INVALID_KEY'],
    ['signed by another key', forged, 'TOKEN_BAD_SIGNATURE'],
    ['100 KB', `${h}.${'A'.repeat(100 * 1024)}.${'B'.repeat(86)}`, 'TOKEN_TOO_LARGE'],
    [
      'a claim list of 10,000 entries (under the size bound: checked by length)',
      s.sign({ methods: Array.from({ length: 10_000 }, () => 'eth_call') }),
      'TOKEN_TOO_LARGE',
    ],
    ['101 methods', s.sign({ methods: Array.from({ length: 101 }, (_, i) => `eth_m${i}`) }), 'TOKEN_CLAIMS_INVALID'],
    ['a method list that is not a list', s.sign({ methods: 'eth_call' }), 'TOKEN_CLAIMS_INVALID'],
    ['no sub', (async () => `${h}.${b64({ aud: AUD, exp: sec + 60 })}.${'A'.repeat(86)}`)(), 'TOKEN_CLAIMS_INVALID'],
    ['no exp', (async () => `${h}.${b64({ sub: KEY_ID, aud: AUD })}.${'A'.repeat(86)}`)(), 'TOKEN_CLAIMS_INVALID'],
  ]
  for (const [name, token, code] of cases) {
    const r = await s.verifier.check(await token)
    t.ok(r instanceof GatewayError, name)
    if (!(r instanceof GatewayError)) continue
    t.equal(r.code, code, name)
    t.equal(r.http, 401, `${name}: 401`)
    t.ok(r.message.length > 20 && !r.message.includes('undefined'), `${name}: a message (${r.message})`)
  }
})

t.test('within the clock skew an expired or early token still passes; past it, not', async (t) => {
  const s = await setup()
  const sec = Math.floor(NOW / 1000)
  t.equal(await outcome(s.verifier.check(await s.sign({}, { exp: sec - 10 }))), 'ok')
  t.equal(await outcome(s.verifier.check(await s.sign({}, { nbf: sec + 10 }))), 'ok')
  t.equal(await outcome(s.verifier.check(await s.sign({}, { exp: sec - 31 }))), 'TOKEN_EXPIRED')
})

t.test('a cached token stops at its exp, and when its key is removed or its owner reloaded', async (t) => {
  const s = await setup()
  const sec = Math.floor(NOW / 1000)
  const token = await s.sign({}, { exp: sec + 60 })
  t.equal(await outcome(s.verifier.check(token)), 'ok')
  s.setNow(NOW + 91_000)
  t.equal(await outcome(s.verifier.check(token)), 'TOKEN_EXPIRED', 'past exp + skew: verified again, and refused')
  s.setNow(NOW)
  t.equal(await outcome(s.verifier.check(token)), 'ok')
  s.owner.keys = []
  t.equal(await outcome(s.verifier.check(token)), 'TOKEN_UNKNOWN_KID', 'the key set changed: the cache entry no longer holds')
})

t.test('the cache of verified tokens is bounded in tokens and in characters, the oldest dropped first', async (t) => {
  const byCount = await setup('ES256', { cacheEntries: 3 })
  for (let i = 0; i < 10; i++) t.notOk((await byCount.verifier.check(await byCount.sign({ n: i }))) instanceof GatewayError, `token ${i} verified`)
  t.equal(byCount.verifier.cached, 3, 'at most 3 tokens kept')
  // Tokens of about 1.5 KB each under a bound of 5,000 characters: three fit, never more.
  const byChars = await setup('ES256', { cacheChars: 5_000 })
  const long = await Promise.all(Array.from({ length: 10 }, (_, i) => byChars.sign({ pad: 'x'.repeat(1_000), n: i })))
  t.ok(
    long.every((token) => token.length > 1_300 && token.length < 1_700),
    'each token is about 1.5 KB',
  )
  for (const token of long) await byChars.verifier.check(token)
  t.equal(byChars.verifier.cached, 3, 'as many as fit in 5,000 characters')
  t.notOk(byChars.verifier.check(long[9]!) instanceof Promise, 'the newest is kept')
  t.ok(byChars.verifier.check(long[0]!) instanceof Promise, 'the oldest was dropped: its signature is checked again')
})

t.test('a claim the gateway reads, named in another case, is refused: ignored, it would narrow nothing', async (t) => {
  const s = await setup()
  for (const claims of [{ Contracts: ['0x' + '11'.repeat(20)] }, { METHODS: ['eth_call'] }, { methods: ['eth_call'], Origins: ['a.example'] }]) {
    const r = await s.verifier.check(await s.sign(claims))
    t.ok(r instanceof GatewayError, JSON.stringify(claims))
    if (!(r instanceof GatewayError)) continue
    t.equal(r.code, 'TOKEN_CLAIMS_INVALID')
    const name = Object.keys(claims).find((k) => k !== k.toLowerCase())!
    t.match(r.message, `claim "${name}" is read as nothing here`)
    t.match(r.message, `name it "${name.toLowerCase()}"`)
  }
  t.equal(
    await outcome(s.verifier.check(await s.sign({ contracts: ['0x' + '11'.repeat(20)], iss: 'me', Custom: 1 }))),
    'ok',
    'other claims are the issuer’s own',
  )
})

t.test('a token narrowing to an empty method list narrows to nothing', async (t) => {
  const s = await setup()
  const r = await s.verifier.check(await s.sign({ methods: [], origins: ['https://app.example.com/x'] }))
  if (r instanceof GatewayError) return t.fail(r.message)
  t.same(r.claims.narrowing, { methods: [] })
  t.same(r.claims.origins, ['app.example.com'])
})

t.test('registration refuses a private key, a secret, a small RSA key, an unknown alg, a key of another curve', async (t) => {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const ec384 = generateKeyPairSync('ec', { namedCurve: 'P-384' })
  const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 })
  const pem = (k: typeof ec.publicKey) => k.export({ type: 'spki', format: 'pem' }).toString()
  t.throws(() => normalizeJwtKey({ kid: 'a', alg: 'ES256', publicKey: ec.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() }), /private key/)
  t.throws(() => normalizeJwtKey({ kid: 'a', alg: 'ES256', publicKey: ec.privateKey.export({ format: 'jwk' }) }), /private key/)
  t.throws(() => normalizeJwtKey({ kid: 'a', alg: 'ES256', publicKey: { kty: 'oct', k: 'c2VjcmV0' } }), /secret/)
  t.throws(() => normalizeJwtKey({ kid: 'a', alg: 'RS256', publicKey: pem(rsa1024.publicKey) }), /1024 bits.*2048/)
  t.throws(() => normalizeJwtKey({ kid: 'a', alg: 'HS256', publicKey: pem(ec.publicKey) }), /algorithm "HS256"/)
  t.throws(() => normalizeJwtKey({ kid: 'a', alg: 'ES256', publicKey: pem(ec384.publicKey) }), /P-256/)
  t.throws(() => normalizeJwtKey({ kid: 'a b', alg: 'ES256', publicKey: pem(ec.publicKey) }), /kid/)
  const fromJwk = normalizeJwtKey({ kid: 'a', alg: 'ES256', publicKey: JSON.stringify(ec.publicKey.export({ format: 'jwk' })) })
  t.equal(fromJwk.publicKey, pem(ec.publicKey), 'a JWK is stored as the same SPKI PEM')
})

t.test('property: random and garbled tokens are refused with a token or key code, never a throw', async (t) => {
  const s = await setup()
  const good = await s.sign({ methods: ['eth_call'] })
  const codes = new Set<string>()
  const garble = fc
    .tuple(fc.nat({ max: good.length - 1 }), fc.string({ minLength: 1, maxLength: 4 }))
    .map(([i, ins]) => good.slice(0, i) + ins + good.slice(i + 1))
  const threeParts = fc
    .tuple(fc.base64String(), fc.base64String(), fc.base64String())
    .map((parts) => parts.map((x) => x.replace(/\+/g, '-').replace(/\//g, '_').replace(/=/g, '')).join('.'))
  const headerAndClaims = fc
    .tuple(fc.jsonValue(), fc.jsonValue())
    .map(([a, b]) => `${Buffer.from(JSON.stringify(a) ?? 'null').toString('base64url')}.${Buffer.from(JSON.stringify(b) ?? 'null').toString('base64url')}.AAAA`)
  await fc.assert(
    fc.asyncProperty(fc.oneof(fc.string({ maxLength: 300 }), garble, threeParts, headerAndClaims), async (token) => {
      const r = await s.verifier.check(token)
      // A garbled last character can decode to the same bytes (base64url's spare bits): the same token.
      if (!(r instanceof GatewayError) && sameBytes(token, good)) return
      if (!(r instanceof GatewayError)) throw new Error(`accepted ${token}`)
      if (!/^TOKEN_|^INVALID_KEY$/.test(r.code) || r.http !== 401) throw new Error(`${r.code} ${r.http} for ${token}`)
      codes.add(r.code)
    }),
    { numRuns: 2000 },
  )
  t.ok(codes.has('TOKEN_MALFORMED') && codes.size >= 3, `several reasons seen: ${[...codes].join(', ')}`)
})

function sameBytes(a: string, b: string): boolean {
  const pa = a.split('.')
  const pb = b.split('.')
  return pa.length === 3 && pa.every((x, i) => /^[A-Za-z0-9_-]*$/.test(x) && Buffer.from(x, 'base64url').equals(Buffer.from(pb[i]!, 'base64url')))
}
