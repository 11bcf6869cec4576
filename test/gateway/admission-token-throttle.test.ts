import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SignJWT, exportSPKI, generateKeyPair } from 'jose'
import { Admission, type AdmissionDeps } from '../../src/gateway/admission.js'
import { IpDirectory } from '../../src/gateway/ip-directory.js'
import { StateStore } from '../../src/store/state-store.js'
import { GatewayError } from '../../src/errors/registry.js'

// A signature check is the dearest thing a client without a valid key can ask of the gateway
// (80-140 µs). An address throttled for its refusals is told so before any: checkToken answers
// IP_THROTTLED at once, where it would otherwise hand back a promise of a signature check.

const dir = mkdtempSync(join(tmpdir(), 'tollgate-admission-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const store = StateStore.open(join(dir, 'state'))
t.teardown(() => store.close())
let now = Date.UTC(2026, 0, 1)
const clock = { now: () => now }
const ips = new IpDirectory(store, clock, { rejections: 3, windowMs: 10_000, durationMs: 60_000 }, () => {})
// The token's key is one that resolves: its check would go on to the signature.
const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true })
const owner = { account: { jwtKeys: [{ kid: 'k1', alg: 'ES256', publicKey: await exportSPKI(publicKey) }] } }
const keys = { resolveById: () => owner, isCurrent: () => true } as unknown as AdmissionDeps['keys']
const admission = new Admission({ ips, keys, tokens: { audience: 'tollgate', clockSkewSeconds: 30, now: clock.now } } as unknown as AdmissionDeps)
const token = await new SignJWT({})
  .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
  .setSubject('key_0123456789abcdef')
  .setAudience('tollgate')
  .setExpirationTime(Math.floor(now / 1000) + 300)
  .sign(privateKey)

t.test('a client not throttled gets its token checked (a signature check: a promise)', async (t) => {
  const checked = admission.checkToken(token, () => '203.0.113.7')
  t.ok(checked instanceof Promise, 'the signature is checked')
  await checked
})

t.test('a throttled address gets IP_THROTTLED before any signature check', async (t) => {
  ips.rejected('203.0.113.9', 5)
  now += 1
  const checked = admission.checkToken(`${token.slice(0, -4)}AAAA`, () => '203.0.113.9')
  t.notOk(checked instanceof Promise, 'answered at once')
  t.ok(checked instanceof GatewayError && checked.code === 'IP_THROTTLED', 'IP_THROTTLED')
})
