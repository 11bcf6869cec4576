import t from 'tap'
import { accountActor } from '../helpers/given.js'

// Excess calls wait briefly in a queue bounded in time (queueMs) and so in length
// (limit × queueMs / 1000 calls), then are rejected.
const given = (limit: number) => accountActor({ full: limit, archive: 0 })

t.test('past the burst, calls queue for the time their token needs, up to queueMs', async (t) => {
  const { actor } = given(100) // 10 ms per token
  for (let i = 0; i < 100; i++) t.equal(actor.charge('full', { calls: 1, queueMs: 250 }).type, 'Admitted')
  const first = actor.charge('full', { calls: 1, queueMs: 250 })
  t.same(first, { type: 'Admitted', remaining: 0, limit: 100, resetMs: 1000, delayMs: 10 }, 'the 101st waits one token')
  const waits = Array.from({ length: 30 }, () => actor.charge('full', { calls: 1, queueMs: 250 }))
  const admitted = waits.filter((d) => d.type === 'Admitted')
  t.equal(admitted.length, 24, 'the queue holds 250 ms of the limit: 25 calls in all')
  t.equal(admitted.at(-1)?.type === 'Admitted' && admitted.at(-1)?.delayMs, 250, 'the last one waits the whole queue time')
  const rejected = waits.filter((d) => d.type === 'Rejected')
  t.equal(rejected.length, 6)
  t.equal(rejected[0].type === 'Rejected' && rejected[0].reason === 'http-rps' && rejected[0].retryAfterMs, 260, 'retry when the queue has room')
})

t.test('the queue drains with time', async (t) => {
  const { actor, clock } = given(100)
  for (let i = 0; i < 125; i++) actor.charge('full', { calls: 1, queueMs: 250 })
  t.equal(actor.charge('full', { calls: 1, queueMs: 250 }).type, 'Rejected', 'full queue')
  clock.advance(250)
  const d = actor.charge('full', { calls: 1, queueMs: 250 })
  t.same(d, { type: 'Admitted', remaining: 0, limit: 100, resetMs: 1000, delayMs: 10 }, 'room again after the queue time')
})

t.test('without a queue, excess calls are rejected at once', async (t) => {
  const { actor } = given(100)
  for (let i = 0; i < 100; i++) actor.charge('full', { calls: 1 })
  t.equal(actor.charge('full', { calls: 1 }).type, 'Rejected')
  t.equal(actor.charge('full', { calls: 1, queueMs: 5 }).type, 'Rejected', 'a queue shorter than one token is no queue')
})
