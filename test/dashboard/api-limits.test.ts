import t from 'tap'
import { FakeClock } from '../helpers/fake-clock.js'
import { parseConfig } from '../../src/config/load.js'
import { ApiError } from '../../src/dashboard/api-errors.js'
import { ApiLimits, ipLimitKey, type ApiClient, type ApiLimitName } from '../../src/dashboard/api-limits.js'

// The dashboard API's limits with a fake clock: per IP and per account, what a 429 says, IPv6
// clients by their /64, and the bound on what the limits remember.

const defaults = parseConfig({ networks: { 'eth-1': { chainId: 1, upstreams: [{ url: 'http://127.0.0.1:8545', kind: 'full' }] } } }).dashboard.limits

/** The refusal of `take`, or undefined when it was admitted. */
function refusal(limits: ApiLimits, name: ApiLimitName, client: ApiClient): ApiError | undefined {
  try {
    limits.take(name, client)
    return undefined
  } catch (err) {
    if (err instanceof ApiError) return err
    throw err
  }
}

t.test('sign-ins per IP: the default burst of 10, then one every 6 s, with Retry-After', async (t) => {
  const clock = new FakeClock()
  const limits = new ApiLimits(defaults, clock)
  const ip = { ip: '203.0.113.7' }
  const refused = Array.from({ length: 11 }, () => refusal(limits, 'signIn', ip))
  t.equal(refused.filter((r) => r === undefined).length, 10)
  const e = refused[10]!
  t.equal(e.code, 'RATE_LIMITED')
  t.equal(e.http, 429)
  t.same(e.details, { limit: 'signIn', retryAfterSeconds: 6 })
  t.same(e.headers, { 'Retry-After': '6' })
  t.equal(e.message, 'Too many sign-in attempts from this IP address (10 at once, then one every 6 s); try again in 6 s.')
  clock.advance(5_999)
  t.same(refusal(limits, 'signIn', ip)?.details, { limit: 'signIn', retryAfterSeconds: 1 }, 'a part of a second is a whole one')
  clock.advance(1)
  t.equal(refusal(limits, 'signIn', ip), undefined, 'one came back')
  t.equal(refusal(limits, 'signIn', { ip: '203.0.113.8' }), undefined, 'another IP has its own')
})

t.test('per account and per IP: an account is limited from any IP; a refusal spends nothing', async (t) => {
  const clock = new FakeClock()
  const limits = new ApiLimits({ ...defaults, keys: { perIp: { burst: 3, everyMs: 60_000 }, perAccount: { burst: 2, everyMs: 60_000 } } }, clock)
  t.equal(refusal(limits, 'keys', { ip: '10.0.0.1', accountId: 'acc_a' }), undefined)
  t.equal(refusal(limits, 'keys', { ip: '10.0.0.2', accountId: 'acc_a' }), undefined)
  const byAccount = refusal(limits, 'keys', { ip: '10.0.0.1', accountId: 'acc_a' })
  t.equal(byAccount?.message, 'Too many key changes from this account (2 at once, then one every 1 min); try again in 1 min.')
  t.equal(refusal(limits, 'keys', { ip: '10.0.0.1', accountId: 'acc_b' }), undefined, 'the 2nd of the IP')
  t.equal(refusal(limits, 'keys', { ip: '10.0.0.1', accountId: 'acc_c' }), undefined, "the 3rd: the account's refusal did not spend the IP's token")
  t.equal(
    refusal(limits, 'keys', { ip: '10.0.0.1', accountId: 'acc_d' })?.message,
    'Too many key changes from this IP address (3 at once, then one every 1 min); try again in 1 min.',
  )
})

t.test('check refuses as take would, and takes nothing', async (t) => {
  const clock = new FakeClock()
  const limits = new ApiLimits({ ...defaults, newAccounts: { ...defaults.newAccounts, perIp: { burst: 1, everyMs: 720_000 } } }, clock)
  const ip = { ip: '198.51.100.1' }
  limits.check('newAccounts', ip)
  limits.check('newAccounts', ip)
  limits.take('newAccounts', ip)
  t.throws(() => limits.check('newAccounts', ip), { code: 'RATE_LIMITED', details: { limit: 'newAccounts', retryAfterSeconds: 720 } })
})

t.test('IPv6 clients are limited by their /64; IPv4-mapped addresses as IPv4', async (t) => {
  t.equal(ipLimitKey('2001:db8:1:2:aaaa::1'), '2001:0db8:0001:0002::/64')
  t.equal(ipLimitKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), '2001:0db8:0001:0002::/64')
  t.equal(ipLimitKey('::1'), '0000:0000:0000:0000::/64')
  t.equal(ipLimitKey('fe80::1%eth0'), 'fe80:0000:0000:0000::/64')
  t.equal(ipLimitKey('0000:0000:0000:0000:0000:ffff:7f00:0001'), '127.0.0.1', 'as uWS writes a v4 peer of a v6 socket')
  t.equal(ipLimitKey('::ffff:192.0.2.10'), '192.0.2.10')
  t.equal(ipLimitKey('192.0.2.10'), '192.0.2.10')
  t.equal(ipLimitKey('x'.repeat(300)), 'x'.repeat(64), 'not an address: cut')

  const limits = new ApiLimits({ ...defaults, signIn: { ...defaults.signIn, perIp: { burst: 2, everyMs: 60_000 } } }, new FakeClock())
  limits.take('signIn', { ip: '2001:db8::1' })
  limits.take('signIn', { ip: '2001:db8::2' })
  t.throws(() => limits.take('signIn', { ip: '2001:db8::3' }), { code: 'RATE_LIMITED' }, 'one /64, one limit')
  t.doesNotThrow(() => limits.take('signIn', { ip: '2001:db8:0:1::1' }), 'the next /64 is another client')
})

t.test('memory: each limit remembers at most maxTracked clients', async (t) => {
  const clock = new FakeClock()
  const limits = new ApiLimits({ ...defaults, maxTracked: 1_000 }, clock)
  for (let i = 0; i < 100_000; i++) {
    limits.take('api', { ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` })
    if (i % 10 === 0) clock.advance(1)
  }
  t.equal(limits.size, 1_000)
})
