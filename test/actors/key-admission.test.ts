import t from 'tap'
import { accountActor } from '../helpers/given.js'

/** given: a fresh key with these limits; when/then happen on the returned actor. */
const given = accountActor

t.test('admits up to the limit in one second, then rejects with the time until a token is back', async (t) => {
  const { actor, admitMany } = given({ full: 500, archive: 250 })
  const admitted = admitMany('full', 500)
  t.ok(
    admitted.every((d) => d.type === 'Admitted'),
    'the first 500 calls are admitted',
  )
  t.same(admitted[0], { type: 'Admitted', remaining: 499, limit: 500, resetMs: 2, delayMs: 0 })
  t.same(admitted[499], { type: 'Admitted', remaining: 0, limit: 500, resetMs: 1000, delayMs: 0 })
  t.same(actor.charge('full', { calls: 1 }), {
    type: 'Rejected',
    reason: 'http-rps',
    retryAfterMs: 2, // one token at 500/s
    limit: 500,
    remaining: 0,
    resetMs: 1000,
  })
})

t.test('waiting exactly retryAfterMs is enough, waiting less is not', async (t) => {
  const { clock, actor, admitMany } = given({ full: 3, archive: 3 })
  admitMany('full', 3)
  const rejected = actor.charge('full', { calls: 1 })
  t.equal(rejected.type, 'Rejected')
  const retryAfterMs = rejected.type === 'Rejected' && rejected.reason === 'http-rps' ? rejected.retryAfterMs : -1
  t.equal(retryAfterMs, 334, 'ceil(1000 / 3)')
  clock.advance(retryAfterMs - 1)
  t.equal(actor.charge('full', { calls: 1 }).type, 'Rejected', 'one ms early')
  clock.advance(1)
  t.equal(actor.charge('full', { calls: 1 }).type, 'Admitted', 'on time')
})

t.test('the bucket refills with time, never above one second of the limit', async (t) => {
  const { clock, actor, admitMany } = given({ full: 10, archive: 10 })
  admitMany('full', 10)
  clock.advance(500)
  t.equal(admitMany('full', 5).filter((d) => d.type === 'Admitted').length, 5, 'half a second: 5 tokens')
  t.equal(actor.charge('full', { calls: 1 }).type, 'Rejected')
  clock.advance(60_000)
  const after = admitMany('full', 11)
  t.equal(after.filter((d) => d.type === 'Admitted').length, 10, 'a minute idle still gives only the burst')
})

t.test('full and archive buckets are separate', async (t) => {
  const { actor, admitMany } = given({ full: 2, archive: 1 })
  admitMany('full', 2)
  t.equal(actor.charge('full', { calls: 1 }).type, 'Rejected')
  t.same(actor.charge('archive', { calls: 1 }), { type: 'Admitted', remaining: 0, limit: 1, resetMs: 1000, delayMs: 0 })
  t.equal(actor.charge('archive', { calls: 1 }).type, 'Rejected')
})

t.test('null limit: unlimited', async (t) => {
  const { admitMany } = given({ full: null, archive: null })
  const decisions = admitMany('archive', 10_000)
  t.ok(
    decisions.every((d) => d.type === 'Admitted' && d.limit === null),
    'nothing rejected',
  )
})

t.test('0 limit: no access to that kind, a different refusal from a rate limit', async (t) => {
  const { clock, actor } = given({ full: 500, archive: 0 })
  t.same(actor.charge('archive', { calls: 1 }), { type: 'Rejected', reason: 'no-access', kind: 'archive', limit: 0, remaining: 0 })
  clock.advance(3_600_000)
  t.equal(actor.charge('archive', { calls: 1 }).type, 'Rejected', 'time does not help')
  t.equal(actor.charge('full', { calls: 1 }).type, 'Admitted')
})

t.test('a batch of N calls costs N tokens', async (t) => {
  const { actor } = given({ full: 100, archive: 100 })
  t.same(actor.charge('full', { calls: 60 }), { type: 'Admitted', remaining: 40, limit: 100, resetMs: 600, delayMs: 0 })
  const rejected = actor.charge('full', { calls: 50 })
  t.match(rejected, { type: 'Rejected', reason: 'http-rps', retryAfterMs: 100 }, '10 tokens missing at 100/s')
  t.same(actor.charge('full', { calls: 40 }), { type: 'Admitted', remaining: 0, limit: 100, resetMs: 1000, delayMs: 0 }, 'a refused batch took nothing')
})

t.test('a batch larger than the burst is admitted from a full bucket and leaves a debt', async (t) => {
  const { clock, actor } = given({ full: 10, archive: 10 })
  actor.charge('full', { calls: 1 })
  t.match(actor.charge('full', { calls: 25 }), { type: 'Rejected', retryAfterMs: 100 }, 'not full: wait until it is')
  clock.advance(100)
  t.match(actor.charge('full', { calls: 25 }), { type: 'Admitted', remaining: 0 }, 'full: admitted')
  t.equal(actor.state.buckets.full.tokens, -15, 'in debt')
  t.match(actor.charge('full', { calls: 1 }), { type: 'Rejected', retryAfterMs: 1600 }, 'the debt is paid back first')
  clock.advance(1600)
  t.equal(actor.charge('full', { calls: 1 }).type, 'Admitted')
})

t.test('a plan change keeps the bucket level (capped at the new burst)', async (t) => {
  const { actor, admitMany, clock } = given({ full: 10, archive: 0 })
  admitMany('full', 10)
  actor.updateLimits({ full: 500, archive: 250 })
  t.equal(actor.charge('full', { calls: 1 }).type, 'Rejected', 'an upgrade does not refill a drained bucket')
  t.same(actor.charge('archive', { calls: 1 }), { type: 'Admitted', remaining: 249, limit: 250, resetMs: 4, delayMs: 0 }, 'newly granted kind starts full')
  clock.advance(1000)
  actor.updateLimits({ full: 2, archive: 250 })
  t.equal(admitMany('full', 3).filter((d) => d.type === 'Admitted').length, 2, 'a downgrade caps the level')
})
