/**
 * CPU per call of a signed token's check (src/gateway/token-verifier.ts), for ES256, RS256 and
 * EdDSA: a token seen before (the cache: the goal is at most 20 µs), a token not seen before (the
 * signature checked with jose, the public key already imported), and as the named baseline the
 * SHA-256 of an API key that every call with a key pays (src/keys/api-key.ts hashApiKey).
 * Each token string is a fresh copy, as a header read per request is, so the cache lookup hashes
 * it every time. CPU from process.cpuUsage (user + system), over many calls.
 *
 *   node --import tsx bench/token-cost.ts [--calls 200000] [--misses 2000] [--gateway 6]
 *
 * `--gateway ROUNDS`: then the same through a gateway in this process over a real anvil, rounds of
 * 300 `eth_blockNumber` over HTTP alternating between the API key and a cached ES256 token: the
 * process CPU per call (gateway and client together, the client's share alike both ways).
 */
import { parseArgs } from 'node:util'
import { SignJWT, exportSPKI, generateKeyPair } from 'jose'
import { GatewayError } from '../src/errors/registry.js'
import { generateApiKey, hashApiKey } from '../src/keys/api-key.js'
import { normalizeJwtKey, type JwtAlg, type JwtPublicKey } from '../src/keys/jwt-keys.js'
import { TokenVerifier } from '../src/gateway/token-verifier.js'

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '200000' }, misses: { type: 'string', default: '2000' }, gateway: { type: 'string' } },
})
const CALLS = Number(values.calls)
const MISSES = Number(values.misses)
const KEY_ID = 'key_0123456789abcdef'

function cpuMicros(): number {
  const u = process.cpuUsage()
  return u.user + u.system
}

/** Distinct string objects with the same text: each one's hash is computed on its first lookup. */
function freshCopies(text: string, n: number): string[] {
  const bytes = Buffer.from(text)
  return Array.from({ length: n }, () => bytes.toString('latin1'))
}

async function measure(alg: JwtAlg): Promise<{ alg: JwtAlg; hitMicros: number; missMicros: number }> {
  const { publicKey, privateKey } = await generateKeyPair(alg)
  const keys: JwtPublicKey[] = [normalizeJwtKey({ kid: 'k1', alg, publicKey: await exportSPKI(publicKey) })]
  const owner = { keyId: KEY_ID }
  const verifier = new TokenVerifier(
    { ownerOf: () => owner, keysOf: () => keys, current: () => true },
    { audience: 'tollgate', clockSkewSeconds: 30, now: Date.now, cacheEntries: MISSES + 10 },
  )
  const sign = (i: number) =>
    new SignJWT({ methods: ['eth_call', 'eth_getLogs'], n: i })
      .setProtectedHeader({ alg, kid: 'k1' })
      .setSubject(KEY_ID)
      .setAudience('tollgate')
      .setExpirationTime('1h')
      .sign(privateKey)

  // Misses: distinct tokens, signed beforehand, each checked once (the public key imported on the first).
  const fresh = await Promise.all(Array.from({ length: MISSES }, (_, i) => sign(i)))
  const warm = await verifier.check(await sign(-1))
  if (warm instanceof GatewayError) throw warm
  let start = cpuMicros()
  for (const token of fresh) {
    const r = await verifier.check(token)
    if (r instanceof GatewayError) throw r
  }
  const missMicros = (cpuMicros() - start) / MISSES

  // Hits: one token, verified once, then checked from fresh copies of its text.
  const token = fresh[0]!
  const copies = freshCopies(token, CALLS)
  start = cpuMicros()
  for (const copy of copies) {
    const r = verifier.check(copy)
    if (r instanceof Promise || r instanceof GatewayError) throw new Error('expected a cache hit')
  }
  const hitMicros = (cpuMicros() - start) / CALLS
  return { alg, hitMicros, missMicros }
}

function keyHashMicros(): number {
  const copies = freshCopies(generateApiKey().key, CALLS)
  const start = cpuMicros()
  for (const key of copies) hashApiKey(key)
  return (cpuMicros() - start) / CALLS
}

const baseline = keyHashMicros()
const rows = []
for (const alg of ['ES256', 'RS256', 'EdDSA'] as const) rows.push(await measure(alg))
console.log(`calls ${CALLS}, misses ${MISSES}, node ${process.version}`)
console.log(`baseline: an API key's SHA-256 (every call with a key): ${baseline.toFixed(2)} µs CPU`)
console.log('alg     cached token µs   ×baseline   new token µs')
for (const r of rows) {
  console.log(
    `${r.alg.padEnd(7)} ${r.hitMicros.toFixed(2).padStart(16)} ${(r.hitMicros / baseline).toFixed(2).padStart(11)} ${r.missMicros.toFixed(1).padStart(14)}`,
  )
}
console.log(JSON.stringify({ calls: CALLS, misses: MISSES, baselineKeyHashMicros: baseline, rows }))

if (values.gateway !== undefined) await throughGateway(Number(values.gateway))

async function throughGateway(rounds: number): Promise<void> {
  const { startAnvil } = await import('../harness/anvil.js')
  const { rpc, startTestGateway } = await import('../test/helpers/gateway.js')
  const cleanups: (() => unknown)[] = []
  const anvil = await startAnvil()
  try {
    const tg = await startTestGateway(
      { teardown: (fn) => void cleanups.push(fn) },
      { networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full' }] } }, config: { cache: { enabled: false } } },
    )
    const { apiKey, accountId, keyId } = await tg.createKey('tier-3')
    const { publicKey, privateKey } = await generateKeyPair('ES256')
    await tg.registerJwtKey(accountId, { kid: 'k1', alg: 'ES256', publicKey: await exportSPKI(publicKey) })
    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setSubject(keyId)
      .setAudience('tollgate')
      .setExpirationTime('1h')
      .sign(privateKey)
    const url = tg.url('eth-1')
    const body = { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }
    // The key's account is projected asynchronously: wait until the token is served.
    for (let i = 0; (await rpc(url, body, { bearer: jwt })).status !== 200; i++) {
      if (i > 200) throw new Error('the token is not served')
      await new Promise((r) => setTimeout(r, 25))
    }
    const CALLS = 300
    const round = async (init: { apiKey?: string; bearer?: string }): Promise<number> => {
      const start = cpuMicros()
      for (let i = 0; i < CALLS; i++) if ((await rpc(url, body, init)).status !== 200) throw new Error('refused')
      return (cpuMicros() - start) / CALLS
    }
    await round({ apiKey })
    await round({ bearer: jwt })
    const key: number[] = []
    const token: number[] = []
    for (let r = 0; r < rounds; r++) {
      if (r % 2 === 0) {
        key.push(await round({ apiKey }))
        token.push(await round({ bearer: jwt }))
      } else {
        token.push(await round({ bearer: jwt }))
        key.push(await round({ apiKey }))
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
    console.log(`through the gateway (${rounds} rounds of ${CALLS} eth_blockNumber, process CPU per call, medians):`)
    console.log(`  API key ${median(key).toFixed(0)} µs, ES256 token ${median(token).toFixed(0)} µs, ratio ${(median(token) / median(key)).toFixed(3)}`)
    console.log(JSON.stringify({ scenario: 'gateway', rounds, calls: CALLS, keyMicros: key, tokenMicros: token }))
  } finally {
    for (const fn of cleanups.reverse()) await fn()
    await anvil.stop()
  }
}
