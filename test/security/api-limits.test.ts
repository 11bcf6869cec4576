import t from 'tap'
import { createSiweMessage } from 'viem/siwe'
import type { Address, Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'
import { startAnvil } from '../../harness/anvil.js'
import { anvilAccount, chainAt, deployErc1271Wallet } from '../helpers/contracts.js'
import { startCountingProxy } from '../helpers/counting-proxy.js'
import { DashboardClient } from '../helpers/dashboard-client.js'
import { startGatewayProcess } from '../helpers/gateway-process.js'

// What a stranger without a key can make the dashboard's API cost: before these limits, one IP
// could send any number of sign-ins, each junk signature for a contract wallet ran an eth_call on
// our node with no gas cap, a nonce whose check failed could be tried again, and every new wallet
// was a new account. The node is a real anvil behind a proxy that counts the calls reaching it.

const HOUR = 3_600_000
/**
 * The default bursts (keys: a smaller one, to keep the test short), with the refill slowed to one
 * an hour: the counts below are then exact, whatever the speed of the machine running the test.
 */
const SIGN_IN_BURST = 10
const CONTRACT_CHECK_BURST = 5
const NEW_ACCOUNT_BURST = 5
const KEYS_PER_ACCOUNT_BURST = 3
const API_BURST = 120
const JUNK_SIGN_INS = 1_000

const anvil = await startAnvil({ chainId: 31337 })
t.teardown(() => anvil.stop())
const proxy = await startCountingProxy(anvil)
t.teardown(() => proxy.close())
const chain = chainAt(anvil.url)
const owner = anvilAccount(3)
const contractWallet: Address = await deployErc1271Wallet(chain, anvilAccount(0), owner.address)

const gw = await startGatewayProcess(t, {
  config: {
    // The test speaks for many clients through X-Forwarded-For, as a reverse proxy would.
    trustProxy: true,
    // No `ws`: every call to the node goes over HTTP, through the counting proxy.
    networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: proxy.url, kind: 'full' }] } },
    dashboard: {
      limits: {
        api: { perIp: { burst: API_BURST, everyMs: HOUR } },
        signIn: { perIp: { burst: SIGN_IN_BURST, everyMs: HOUR } },
        contractChecks: { perIp: { burst: CONTRACT_CHECK_BURST, everyMs: HOUR } },
        newAccounts: { perIp: { burst: NEW_ACCOUNT_BURST, everyMs: HOUR } },
        keys: { perAccount: { burst: KEYS_PER_ACCOUNT_BURST, everyMs: HOUR } },
      },
    },
  },
})
const url = new URL(gw.http)

let ipCounter = 0
/** A client IP address of its own (the gateway trusts X-Forwarded-For here). */
const freshIp = (): string => `10.${(++ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`

/** POST as the page does, from `ip`. */
async function post(ip: string, path: string, body: unknown, cookie = ''): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(gw.http + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url.origin, 'x-forwarded-for': ip, ...(cookie ? { cookie } : {}) },
    body: JSON.stringify(body),
  })
  return { status: res.status, json: await res.json(), headers: res.headers }
}

/** A nonce fetched from an IP of its own (nonces are not tied to an IP: an attacker can collect them anywhere). */
async function nonce(): Promise<string> {
  const { status, json } = await post(freshIp(), '/api/siwe/nonce', {})
  if (status !== 200) throw new Error(`nonce: ${status} ${JSON.stringify(json)}`)
  return json.nonce
}

function message(address: Address, nonceValue: string): string {
  return createSiweMessage({
    domain: url.host,
    address,
    uri: url.origin,
    version: '1',
    chainId: 31337,
    nonce: nonceValue,
    issuedAt: new Date(),
    expirationTime: new Date(Date.now() + 300_000),
  })
}

const junkSignature = (i: number): Hex => `0x${(i + 1).toString(16).padStart(8, '0').repeat(16)}1b`

async function signIn(ip: string, account: PrivateKeyAccount): Promise<{ status: number; json: any; cookie: string }> {
  const text = message(account.address, await nonce())
  const res = await fetch(gw.http + '/api/siwe/verify', {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: url.origin, 'x-forwarded-for': ip },
    body: JSON.stringify({ message: text, signature: await account.signMessage({ message: text }) }),
  })
  return { status: res.status, json: await res.json(), cookie: (res.headers.get('set-cookie') ?? '').split(';')[0]! }
}

t.test(`${JUNK_SIGN_INS} junk sign-ins for a contract wallet from one IP cost at most ${CONTRACT_CHECK_BURST} eth_calls`, async (t) => {
  t.not((await anvil.rpc('eth_getCode', [contractWallet, 'latest'])).result, '0x', 'the wallet has code: its signatures are checked on the node')
  const nonces: string[] = []
  for (let i = 0; i < JUNK_SIGN_INS; i++) nonces.push(await nonce())
  const calls = proxy.count('eth_call')
  const codes = proxy.count('eth_getCode')
  const attacker = '203.0.113.7'
  const statuses = new Map<string, number>()
  const refusals: Array<{ header: string | null; json: any }> = []
  for (let i = 0; i < JUNK_SIGN_INS; i++) {
    const answer = await post(attacker, '/api/siwe/verify', { message: message(contractWallet, nonces[i]!), signature: junkSignature(i) })
    // Refused by the `api` limit (every call), the `signIn` one or the `contractChecks` one, each
    // named in its 429: the counts below say which limit refused how many.
    const what = `${answer.status} ${answer.json.error?.code}${answer.status === 429 ? ` ${answer.json.error?.details?.limit}` : ''}`
    statuses.set(what, (statuses.get(what) ?? 0) + 1)
    if (answer.status === 429) refusals.push({ header: answer.headers.get('retry-after'), json: answer.json })
  }
  t.same(
    Object.fromEntries(statuses),
    {
      '401 BAD_SIGNATURE': CONTRACT_CHECK_BURST,
      '429 RATE_LIMITED contractChecks': SIGN_IN_BURST - CONTRACT_CHECK_BURST,
      '429 RATE_LIMITED signIn': API_BURST - SIGN_IN_BURST,
      '429 RATE_LIMITED api': JUNK_SIGN_INS - API_BURST,
    },
    'the api limit admits its burst and refuses the rest; of those, the sign-in limit admits its own; of those, the contract-check limit its own',
  )
  t.equal(proxy.count('eth_call') - calls, CONTRACT_CHECK_BURST, `N = ${CONTRACT_CHECK_BURST}: one eth_call per admitted contract check, none for the rest`)
  t.equal(proxy.count('eth_getCode') - codes, SIGN_IN_BURST, 'one eth_getCode (no execution) per sign-in the limit admitted')
  for (const r of refusals) {
    t.match(r.header, /^[1-9][0-9]*$/, 'Retry-After in whole seconds')
    t.equal(r.json.error.details.retryAfterSeconds, Number(r.header), 'the body says the same as Retry-After')
    t.ok(Number(r.header) <= HOUR / 1000, 'never longer than the refill of one token')
  }
  t.equal(refusals.length, JUNK_SIGN_INS - CONTRACT_CHECK_BURST)
})

t.test('junk signatures for an EOA cost no eth_call at all', async (t) => {
  const ip = freshIp()
  const eoa = privateKeyToAccount(generatePrivateKey()).address
  const calls = proxy.count('eth_call')
  const codes = proxy.count('eth_getCode')
  for (let i = 0; i < 3; i++) {
    const answer = await post(ip, '/api/siwe/verify', { message: message(eoa, await nonce()), signature: junkSignature(i) })
    t.equal(answer.status, 401)
    t.equal(answer.json.error.code, 'BAD_SIGNATURE')
  }
  t.equal(proxy.count('eth_call') - calls, 0, 'no eth_call')
  t.equal(proxy.count('eth_getCode') - codes, 3, 'one eth_getCode each: the address has no code, so it is an EOA')
})

t.test('a nonce whose verification failed is refused after, even with the right signature', async (t) => {
  const ip = freshIp()
  const alice = privateKeyToAccount(generatePrivateKey())
  const text = message(alice.address, await nonce())
  const junk = await post(ip, '/api/siwe/verify', { message: text, signature: junkSignature(7) })
  t.equal(junk.status, 401)
  const right = await post(ip, '/api/siwe/verify', { message: text, signature: await alice.signMessage({ message: text }) })
  t.equal(right.status, 409)
  t.equal(right.json.error.code, 'NONCE_USED')
  const fresh = await signIn(ip, alice)
  t.equal(fresh.status, 200, 'a new nonce signs in')
})

t.test('one IP creates at most its burst of new accounts; existing accounts still sign in', async (t) => {
  const ip = freshIp()
  const wallets = Array.from({ length: NEW_ACCOUNT_BURST + 1 }, () => privateKeyToAccount(generatePrivateKey()))
  const statuses: string[] = []
  for (const w of wallets) {
    const out = await signIn(ip, w)
    statuses.push(`${out.status}${out.status === 429 ? ` ${out.json.error.details.limit}` : ''}`)
  }
  t.same(statuses, [...Array<string>(NEW_ACCOUNT_BURST).fill('200'), '429 newAccounts'])
  t.equal((await signIn(ip, wallets[0]!)).status, 200, 'an account made before signs in again from that IP')
  t.equal((await signIn(freshIp(), wallets[NEW_ACCOUNT_BURST]!)).status, 200, 'the refused wallet signs up from another IP')
})

t.test('an account keeps at most 10 sessions: an 11th sign-in ends the oldest', async (t) => {
  const bob = privateKeyToAccount(generatePrivateKey())
  const cookies: string[] = []
  for (let i = 0; i < 11; i++) {
    const out = await signIn(freshIp(), bob)
    t.equal(out.status, 200)
    cookies.push(out.cookie)
  }
  const me = async (cookie: string) => (await fetch(gw.http + '/api/me', { headers: { cookie, 'x-forwarded-for': freshIp() } })).status
  t.equal(await me(cookies[0]!), 401, 'the oldest session is gone')
  for (const cookie of cookies.slice(1)) t.equal(await me(cookie), 200)
})

t.test('key regenerations of one account are limited, from any IP', async (t) => {
  const carol = privateKeyToAccount(generatePrivateKey())
  const { cookie } = await signIn(freshIp(), carol)
  t.equal((await post(freshIp(), '/api/plans', { planId: 'free-trial' }, cookie)).status, 200)
  const statuses: number[] = []
  let last: any
  for (let i = 0; i <= KEYS_PER_ACCOUNT_BURST; i++) {
    const out = await post(freshIp(), '/api/keys/regenerate', { graceSeconds: 0 }, cookie)
    statuses.push(out.status)
    last = out
  }
  t.same(statuses, [...Array<number>(KEYS_PER_ACCOUNT_BURST).fill(200), 429])
  t.equal(last.json.error.code, 'RATE_LIMITED')
  t.equal(last.json.error.details.limit, 'keys')
  t.match(last.headers.get('retry-after'), /^[1-9][0-9]*$/)
})

t.test('one IP is limited on every API call, with Retry-After', async (t) => {
  const ip = freshIp()
  const c = new DashboardClient(gw.http)
  const statuses = new Map<number, number>()
  let refused: any
  const started = Date.now()
  for (let i = 0; i < API_BURST + 5; i++) {
    const out = await c.call('GET', i % 2 ? '/api/config' : '/api/session', undefined, { 'x-forwarded-for': ip })
    statuses.set(out.status, (statuses.get(out.status) ?? 0) + 1)
    if (out.status === 429) refused = out.json
  }
  t.same(Object.fromEntries(statuses), { 200: API_BURST, 429: 5 }, 'the burst, then refusals')
  t.equal(refused.error.code, 'RATE_LIMITED')
  // The bucket refills while the burst is sent (one call an hour): by the time of the last
  // refusal the wait is the hour less the time the burst took, measured here.
  const tookS = Math.ceil((Date.now() - started) / 1000)
  t.equal(refused.error.details.limit, 'api')
  const retry = refused.error.details.retryAfterSeconds
  t.ok(retry <= HOUR / 1000 && retry >= HOUR / 1000 - tookS, `Retry-After is the hour less the ${tookS} s the burst took: ${retry} s`)
  const wait = retry % 3600 === 0 ? `${retry / 3600} h` : retry % 60 === 0 ? `${retry / 60} min` : `${retry} s`
  t.equal(refused.error.message, `Too many calls to the dashboard API from this IP address (120 at once, then one every 1 h); try again in ${wait}.`)
  t.equal((await c.call('GET', '/api/config', undefined, { 'x-forwarded-for': freshIp() })).status, 200, 'another IP is not limited')
})
