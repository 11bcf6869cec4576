import t from 'tap'
import { compiledOf, ipAllowed, normalizeRestrictions, RESTRICTION_BOUNDS } from '../../src/keys/key-restrictions.js'
import { BadRestrictionError } from '../../src/keys/errors.js'
import { keyCallRefusal, requestRefusal } from '../../src/gateway/key-rules.js'
import { decide, type AccountCommand } from '../../src/accounts/decide.js'
import { foldAccount, type AccountState } from '../../src/accounts/account-state.js'
import { makeEvent } from '../../src/events/make-event.js'
import type { TollgateEvent } from '../../src/events/types.js'
import { eventDecider } from '../helpers/given.js'
import { loadPlanCatalog } from '../../src/plans/catalog.js'
import { keyProjection } from '../../src/projections/key-projection.js'

const A = '0x' + 'aa'.repeat(20)
const B = '0x' + 'bb'.repeat(20)

t.test('restrictions as given are normalised, and bad ones refused naming the type and entry', async (t) => {
  t.same(
    normalizeRestrictions({
      methods: [' eth_call ', 'eth_call', 'debug_*', ''],
      contracts: [A.toUpperCase().replace('0X', '0x')],
      ips: ['10.0.0.0/8', '2001:DB8::1'],
    }),
    { methods: ['eth_call', 'debug_*'], contracts: [A], ips: ['10.0.0.0/8', '2001:db8::1'] },
  )
  t.same(normalizeRestrictions({ methods: [], userAgents: null }), {}, 'empty lists are no rule')
  const bad: Array<[unknown, RegExp]> = [
    [[], /must be an object/],
    [{ method: ['eth_call'] }, /unknown restriction "method"; the types are methods, deniedMethods/],
    [{ methods: 'eth_call' }, /methods must be a list/],
    [{ methods: ['eth call'] }, /"eth call" is not a method name/],
    [{ methods: ['*'] }, /is not a method name/],
    [{ contracts: ['0x1234'] }, /contracts: "0x1234" is not an address/],
    [{ ips: ['10.0.0.0/33'] }, /prefix length outside 0-32/],
    [{ ips: ['example.com'] }, /not an IP address or a CIDR range/],
    [{ userAgents: ['caf\u00e9'] }, /not printable ASCII/],
    [{ userAgents: [5] }, /5 is not text/],
    [{ methods: ['eth_call'], deniedMethods: ['eth_sign'] }, /not both/],
    [{ contracts: Array.from({ length: RESTRICTION_BOUNDS.contracts + 1 }, (_, i) => '0x' + i.toString(16).padStart(40, '0')) }, /51 entries, at most 50/],
  ]
  for (const [input, message] of bad)
    t.throws(() => normalizeRestrictions(input), { name: BadRestrictionError.name, message }, JSON.stringify(input).slice(0, 60))
})

t.test('IP rules: addresses and ranges of both families, IPv4-mapped IPv6 matched as IPv4', async (t) => {
  const c = compiledOf(normalizeRestrictions({ ips: ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7'] }))
  t.ok(ipAllowed(c, '203.0.113.200'))
  t.ok(ipAllowed(c, '198.51.100.7'))
  t.notOk(ipAllowed(c, '198.51.100.8'))
  t.ok(ipAllowed(c, '2001:db8:1::5'))
  t.notOk(ipAllowed(c, '2001:db9::1'))
  t.ok(ipAllowed(c, '::ffff:203.0.113.9'), 'a dual-stack socket reports an IPv4 client so')
  t.notOk(ipAllowed(c, ''), 'an unknown address is not in any range')
  t.notOk(ipAllowed(c, 'garbage'))
})

t.test('request rules read the IP and the user agent only when the key has such a rule', async (t) => {
  const asked: string[] = []
  const req = (ua: string, ip: string) => ({
    userAgent: () => {
      asked.push('ua')
      return ua
    },
    ip: () => {
      asked.push('ip')
      return ip
    },
  })
  t.equal(requestRefusal({ methods: ['eth_call'] }, req('x', '1.2.3.4')), undefined)
  t.same(asked, [], 'neither read for a method rule')
  t.equal(requestRefusal({ userAgents: ['a', 'MyApp'] }, req('Mozilla MyApp/1', '1.2.3.4')), undefined, 'one entry of several (OR)')
  t.match(requestRefusal({ userAgents: ['MyApp'] }, req('', '1.2.3.4')), { rule: 'user-agent', message: /no User-Agent header/ })
})

t.test('the per-call rules, and names that are not methods', async (t) => {
  t.equal(keyCallRefusal(undefined, { method: 'eth_call', params: [] }), undefined, 'no restrictions')
  const r = { contracts: [A] }
  t.equal(keyCallRefusal(r, { method: 'eth_call', params: [{ to: A }, 'latest'] }), undefined)
  t.match(keyCallRefusal(r, { method: 'eth_call', params: { to: A } }), { rule: 'contract', message: /no transaction object/ }, 'params by name')
  t.match(keyCallRefusal(r, { method: 'toString', params: [] }), { rule: 'contract', message: /not in the method table/ }, 'not a table entry by inheritance')
  t.match(keyCallRefusal(r, { method: 'eth_getBalance', params: [5] }), { message: /address is missing/ })
  t.match(keyCallRefusal({ methods: ['eth_*'] }, { method: 'constructor', params: [] }), { rule: 'method' })
  t.equal(keyCallRefusal({ methods: ['eth_subscribe'] }, { method: 'eth_unsubscribe', params: ['0x1'] }), undefined)
  t.match(keyCallRefusal(r, { method: 'eth_newFilter', params: [{ address: B }] }), { rule: 'contract' }, 'a filter made over HTTP meets the rule too')
  t.equal(keyCallRefusal(r, { method: 'eth_subscribe', params: ['newPendingTransactions'] }), undefined)
  const many = { methods: Array.from({ length: 8 }, (_, i) => `eth_m${i}`) }
  t.match(keyCallRefusal(many, { method: 'eth_call', params: [] })!.message, /eth_m0, eth_m1, eth_m2, eth_m3, eth_m4 and 3 more/, 'a long list is cut')
})

// given/when/then over the account's decider.
const catalog = loadPlanCatalog('default')
const T = 1_700_000_000_000
const ACC = 'acc_1'
const opened = [
  makeEvent({ type: 'AccountCreated', accountId: ACC, wallet: A }, T),
  makeEvent({ type: 'KeyIssued', accountId: ACC, keyId: 'key_1', keyHash: 'a'.repeat(64), keyCipher: 'c' }, T),
]
const given = eventDecider({
  fold: (events: TollgateEvent[]) => foldAccount(ACC, events),
  decide: (c: AccountCommand, s: AccountState) => decide(c, s, { catalog }),
})

t.test('RestrictKey replaces the types given and keeps the others', async (t) => {
  const first = given(...opened)
    .when({ type: 'RestrictKey', set: { methods: ['eth_call'], contracts: [A] }, types: ['methods', 'contracts'], now: T + 1 })
    .decided()
  t.match(first, [{ type: 'KeyRestricted', keyId: 'key_1', methods: ['eth_call'], deniedMethods: [], contracts: [A], ips: [], userAgents: [] }])
  const second = given(...opened, ...first)
    .when({ type: 'RestrictKey', set: { deniedMethods: ['eth_sign'] }, types: ['deniedMethods', 'ips'], now: T + 2 })
    .decided()
  t.match(second, [{ methods: [], deniedMethods: ['eth_sign'], contracts: [A], ips: [] }], 'denied methods replace allowed ones; contracts kept')
  t.match(given(opened[0]!).when({ type: 'RestrictKey', set: {}, types: [], now: T }).refused(), { name: 'NoActiveKeyError' })
})

t.test('a regenerated key keeps the restrictions of the key it replaces', async (t) => {
  const restricted = makeEvent(
    { type: 'KeyRestricted', accountId: ACC, keyId: 'key_1', methods: [], deniedMethods: [], contracts: [B], ips: ['10.0.0.0/8'], userAgents: [] },
    T + 1,
  )
  const out = given(...opened, restricted)
    .when({ type: 'RegenerateKey', key: { keyId: 'key_2', keyHash: 'b'.repeat(64), keyCipher: 'd' }, graceMs: 0, now: T + 2 })
    .decided()
  t.match(
    out.filter((e) => e.type === 'KeyRestricted'),
    [{ keyId: 'key_2', contracts: [B], ips: ['10.0.0.0/8'] }],
  )
})

t.test('the projection keeps the restrictions on the key record, and none when lifted', async (t) => {
  const records = new Map<string, any>()
  const writer = {
    key: (hash: string) => records.get(hash),
    keyHashOf: (keyId: string) => [...records.values()].find((k) => k.keyId === keyId)?.keyHash,
    putKey: (k: any) => records.set(k.keyHash, k),
  }
  keyProjection.apply(opened[1]!, writer as never)
  keyProjection.apply(
    makeEvent(
      { type: 'KeyRestricted', accountId: ACC, keyId: 'key_1', methods: ['eth_call'], deniedMethods: [], contracts: [], ips: [], userAgents: [] },
      T + 1,
    ),
    writer as never,
  )
  t.same(records.get('a'.repeat(64)).restrictions, { methods: ['eth_call'] })
  keyProjection.apply(
    makeEvent({ type: 'KeyRestricted', accountId: 'acc_other', keyId: 'key_1', methods: [], deniedMethods: [], contracts: [], ips: [], userAgents: [] }, T + 2),
    writer as never,
  )
  t.same(records.get('a'.repeat(64)).restrictions, { methods: ['eth_call'] }, "another account's event changes nothing")
  keyProjection.apply(
    makeEvent({ type: 'KeyRestricted', accountId: ACC, keyId: 'key_1', methods: [], deniedMethods: [], contracts: [], ips: [], userAgents: [] }, T + 3),
    writer as never,
  )
  t.notOk('restrictions' in records.get('a'.repeat(64)), 'lifted: no field at all')
})
