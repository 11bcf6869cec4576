import t from 'tap'
import { COOL_MS, HOT_LEASE_MS, NO_USAGE, OwnedAccounts, WINDOW_MS, heat, type RateLimits } from '../../actors/fleet/hot-accounts.js'

// An owner's view of an account, given what instances reported, when it is hot: half of a limit over
// the last second, any refusal, a cooldown; cold again only after a second under a quarter; a dead
// instance's part dropped; marks renewed at half their lease.

const LIMITS: RateLimits = { full: 60, archive: null, fullUnits: null, archiveUnits: null, messages: 60, connects: 15 }
const T0 = 1_000_000
const owned = () => new OwnedAccounts(() => LIMITS)

t.test('heat is the largest part of any limit', async (t) => {
  t.equal(heat({ ...NO_USAGE, full: 30 }, LIMITS), 0.5)
  t.equal(heat({ ...NO_USAGE, full: 6, connects: 9 }, LIMITS), 0.6, 'connections count as calls do')
  t.equal(heat({ ...NO_USAGE, archive: 1_000 }, LIMITS), 0, 'an unlimited kind never heats')
})

t.test('half a limit over the last second, summed over instances, turns an account hot', async (t) => {
  const o = owned()
  o.add('a', 'i1', { ...NO_USAGE, full: 14 }, T0)
  o.add('a', 'i2', { ...NO_USAGE, full: 15 }, T0 + 10)
  t.same(o.judge('a', T0 + 10), { hot: false, turnedHot: false }, '29 of 60: cold')
  o.add('a', 'i3', { ...NO_USAGE, full: 1 }, T0 + 20)
  t.same(o.judge('a', T0 + 20), { hot: true, turnedHot: true }, '30 of 60: hot')
  t.same(o.announce(['a'], T0 + 20), [['a', T0 + 20 + HOT_LEASE_MS]], 'announced')
  t.same(o.announce(['a'], T0 + 100), [], 'not again before half its lease')
  t.same(o.announce(['a'], T0 + 20 + HOT_LEASE_MS / 2), [['a', T0 + 20 + (3 * HOT_LEASE_MS) / 2]], 'renewed at half')
})

t.test('what is older than the window no longer counts', async (t) => {
  const o = owned()
  o.add('a', 'i1', { ...NO_USAGE, full: 20 }, T0)
  o.add('a', 'i1', { ...NO_USAGE, full: 20 }, T0 + WINDOW_MS)
  t.equal(o.usage('a', T0 + WINDOW_MS).full, 20)
  t.same(o.judge('a', T0 + WINDOW_MS).hot, false)
})

t.test('a refusal or a cooldown turns it hot whatever the count', async (t) => {
  const o = owned()
  o.add('a', 'i1', { ...NO_USAGE, refused: 1 }, T0)
  t.equal(o.judge('a', T0).hot, true, 'refused')
  o.block('b', T0 + 5_000)
  t.equal(o.judge('b', T0).hot, true, 'a cooldown running')
})

t.test('cold again only after COOL_MS under a quarter (hysteresis)', async (t) => {
  const o = owned()
  o.add('a', 'i1', { ...NO_USAGE, full: 40 }, T0)
  t.equal(o.judge('a', T0).hot, true)
  // 20 a second (a third: between θ/2 and θ) keeps it hot indefinitely.
  let at = T0
  for (let k = 1; k <= 30; k++) {
    at = T0 + k * 100
    o.add('a', 'i1', { ...NO_USAGE, full: 2 }, at)
    t.equal(o.judge('a', at).hot, true, `still hot at ${k * 100} ms`)
  }
  // Silence: under a quarter once the window empties, cold a COOL_MS later.
  let cold = 0
  for (let ms = 100; ms <= 4_000; ms += 50) if (cold === 0 && !o.judge('a', at + ms).hot) cold = ms
  t.ok(cold >= COOL_MS && cold <= WINDOW_MS + COOL_MS + 50, `cold ${cold} ms after the calls stopped`)
})

t.test('a dead instance stops counting; accounts no longer owned are forgotten', async (t) => {
  const o = owned()
  o.add('a', 'i1', { ...NO_USAGE, full: 20 }, T0)
  o.add('a', 'i2', { ...NO_USAGE, full: 20 }, T0)
  o.drop('i2')
  t.equal(o.usage('a', T0).full, 20)
  o.sweep(T0, () => false)
  t.equal(o.size, 0)
})
