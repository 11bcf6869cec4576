import t from 'tap'
import { accountActor } from '../helpers/given.js'

// Units per second beside calls per second (issue 30): given a key's limits, when calls of some
// cost are admitted, then the units limit refuses what the calls limit lets through.
const TRACE = 309
const BALANCE = 19

const given = accountActor

t.test('a burst of traces within the calls per second is refused by the units per second, with the time to wait', async (t) => {
  const { actor } = given({ full: 500, archive: 250, fullUnits: 1000 })
  const admitted = [1, 2, 3].map(() => actor.charge('full', { calls: 1, units: TRACE }))
  t.ok(
    admitted.every((d) => d.type === 'Admitted'),
    '3 traces: 927 units of 1000',
  )
  t.same(actor.charge('full', { calls: 1, units: TRACE }), {
    type: 'Rejected',
    reason: 'http-units',
    retryAfterMs: 236, // 309 - 73 units left, at 1000 units/s
    limit: 1000,
    remaining: 0,
    resetMs: 927,
  })
  t.equal(actor.charge('full', { calls: 1, units: BALANCE }).type, 'Admitted', 'a cheap call still fits in what is left')
  t.equal(actor.state.buckets.full.tokens, 500 - 4, 'the refused trace took no call token')
})

t.test('waiting the retry time is enough, a ms less is not', async (t) => {
  const { clock, actor } = given({ full: 500, archive: 250, fullUnits: 1000 })
  for (let i = 0; i < 3; i++) actor.charge('full', { calls: 1, units: TRACE })
  const refused = actor.charge('full', { calls: 1, units: TRACE })
  const wait = refused.type === 'Rejected' && refused.reason !== 'no-access' ? refused.retryAfterMs : -1
  clock.advance(wait - 1)
  t.equal(actor.charge('full', { calls: 1, units: TRACE }).type, 'Rejected')
  clock.advance(1)
  t.equal(actor.charge('full', { calls: 1, units: TRACE }).type, 'Admitted')
})

t.test('the calls limit still applies, and its refusal names the calls', async (t) => {
  const { actor } = given({ full: 2, archive: 250, fullUnits: 1_000_000 })
  actor.charge('full', { calls: 2, units: 2 * BALANCE })
  const d = actor.charge('full', { calls: 1, units: BALANCE })
  t.match(d, { type: 'Rejected', reason: 'http-rps', limit: 2 })
  t.equal(actor.state.buckets.fullUnits.tokens, 1_000_000 - 2 * BALANCE, 'the refused call took no units')
})

t.test('queued: within queueMs a call waits for the later of its two limits, past it it is refused', async (t) => {
  const { actor } = given({ full: 500, archive: 250, fullUnits: 1000 })
  for (let i = 0; i < 3; i++) actor.charge('full', { calls: 1, units: TRACE })
  t.match(actor.charge('full', { calls: 1, queueMs: 250, units: TRACE }), { type: 'Admitted', delayMs: 236 }, 'waits 236 ms for its units')
  t.match(actor.charge('full', { calls: 1, queueMs: 250, units: TRACE }), { type: 'Rejected', reason: 'http-units' }, 'the next would wait 545 ms')
})

t.test('a plan without units limits (or a kind without one) admits by calls only', async (t) => {
  const { actor } = given({ full: 500, archive: 250 })
  for (let i = 0; i < 100; i++) t.equal(actor.charge('full', { calls: 1, units: 2983 }).type, 'Admitted')
  const partial = given({ full: 500, archive: 250, fullUnits: 1000, archiveUnits: null }).actor
  for (let i = 0; i < 10; i++) t.equal(partial.charge('archive', { calls: 1, units: 2983 }).type, 'Admitted', 'archive has no units limit')
  t.equal(partial.charge('full', { calls: 1, units: 2983 }).type, 'Admitted', 'one call over a full bucket of units goes into debt')
  t.equal(partial.charge('full', { calls: 1, units: 1 }).type, 'Rejected', 'and the debt is paid back before the next')
})

t.test('unlimited calls with a units limit: the units still bound the key', async (t) => {
  const { actor } = given({ full: null, archive: null, fullUnits: 100 })
  t.equal(actor.charge('full', { calls: 5, units: 5 * BALANCE }).type, 'Admitted')
  t.match(actor.charge('full', { calls: 1, units: BALANCE }), { type: 'Rejected', reason: 'http-units', limit: 100 })
})

t.test('units admitted are what the fleet shares, and what another instance admitted is taken here', async (t) => {
  const { actor } = given({ full: 500, archive: 250, fullUnits: 1000 })
  actor.charge('full', { calls: 1, units: TRACE })
  t.match(actor.takeConsumed(), { full: 1, fullUnits: TRACE, archiveUnits: 0 })
  const other = given({ full: 500, archive: 250, fullUnits: 1000 }).actor
  other.consumedElsewhere({ full: 3, archive: 0, fullUnits: 3 * TRACE, archiveUnits: 0, messages: 0, connects: 0, cooldownUntil: 0, penaltyUntil: 0 })
  t.match(other.charge('full', { calls: 1, units: TRACE }), { type: 'Rejected', reason: 'http-units' }, 'the fleet’s traces count here')
})

t.test('a WebSocket message’s units are charged with no calls: the calls bucket is not touched', async (t) => {
  const { actor } = given({ full: 1, archive: 250, fullUnits: 1000 })
  actor.charge('full', { calls: 1 }) // an HTTP call drains the calls bucket
  t.equal(actor.charge('full', { calls: 0, units: TRACE }).type, 'Admitted', 'units only: admitted while the calls bucket is empty')
  t.equal(actor.state.buckets.full.tokens, 0)
})
