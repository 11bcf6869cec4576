import t from 'tap'
import fc from 'fast-check'
import { connectionAllowance, scaled, shareWhenCutOff } from '../../actors/fleet/shares.js'
import { consumedElsewhere, decide, initialRateState } from '../../actors/account/decide.js'

t.test('instances that saw the same counts never allow more than the limit between them', async (t) => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 200 }), fc.array(fc.integer({ min: 0, max: 80 }), { minLength: 1, maxLength: 8 }), (max, open) => {
      const allowances = open.map((published, rank) => connectionAllowance({ max, published, others: open.filter((_, j) => j !== rank), rank }))
      const total = allowances.reduce((a, b) => a + b, 0)
      const used = open.reduce((a, b) => a + b, 0)
      // All of the limit is handed out when it is free, and never more than what is open already.
      return total === Math.max(max, used) || (used > max && total === used)
    }),
  )
  t.pass('checked over random fleets')
})

t.test('one instance alone may hold all of the limit; three share it 17, 17, 16', async (t) => {
  t.equal(connectionAllowance({ max: 50, published: 0, others: [], rank: 0 }), 50)
  t.same(
    [0, 1, 2].map((rank) => connectionAllowance({ max: 50, published: 0, others: [0, 0], rank })),
    [17, 17, 16],
  )
  t.equal(connectionAllowance({ max: 50, published: 30, others: [10, 10], rank: 2 }), 30, 'nothing free: what it holds')
})

t.test('cut off, an instance applies its share of the fleet it last saw, never nothing', async (t) => {
  t.equal(shareWhenCutOff(3), 1 / 3)
  t.equal(shareWhenCutOff(0), 1)
  t.equal(scaled(500, 1 / 3), 166)
  t.equal(scaled(2, 1 / 3), 1)
  t.equal(scaled(null, 1 / 3), null, 'unlimited stays unlimited')
  t.equal(scaled(0, 1 / 3), 0, 'no access stays none')
})

t.test('what other instances admitted comes out of the key budget, in debt if need be', async (t) => {
  const now = 1_000_000
  const state = initialRateState({ keyId: 'k', accountId: 'a', limits: { full: 10, archive: null } }, now)
  const after = consumedElsewhere(state, { type: 'ConsumedElsewhere', full: 25, archive: 5, messages: 0, connects: 0 }, now)
  t.equal(after.buckets.full.tokens, -15, 'ten in the bucket, 25 taken elsewhere')
  const refused = decide(after, { type: 'Charge', kind: 'full', calls: 1 }, now + 1_000)
  t.equal(refused.decision.type, 'Rejected', 'a second later the debt is not paid back yet')
  const admitted = decide(after, { type: 'Charge', kind: 'full', calls: 1 }, now + 1_600)
  t.equal(admitted.decision.type, 'Admitted', 'after 1.6 s it is')
  t.same(after.buckets.archive, state.buckets.archive, 'an unlimited kind has no budget to take from')
})

t.test("another instance's new connections count in the one-second window from when it made them", async (t) => {
  const now = 1_000_000
  const state = initialRateState({ keyId: 'k', accountId: 'a', limits: { full: 10, archive: null } }, now)
  const wsAt = (s: typeof state, at: number) => decide(s, { type: 'WsConnect' }, at).decision.type
  const fresh = consumedElsewhere(state, { type: 'ConsumedElsewhere', full: 0, archive: 0, messages: 0, connects: 15, connectedAt: now }, now)
  t.equal(wsAt(fresh, now + 10), 'WsRefused', '15 just made elsewhere: the 16th within the second is refused here')
  const late = consumedElsewhere(state, { type: 'ConsumedElsewhere', full: 0, archive: 0, messages: 0, connects: 15, connectedAt: now - 1_500 }, now)
  t.equal(late.ws.recentConnects.length, 0, 'a message that arrives 1.5 s after they were made adds nothing to the window')
  t.equal(wsAt(late, now + 10), 'WsAccepted', 'and a connection is accepted')
  const partly = consumedElsewhere(state, { type: 'ConsumedElsewhere', full: 0, archive: 0, messages: 0, connects: 15, connectedAt: now - 600 }, now)
  t.equal(wsAt(partly, now + 10), 'WsRefused', 'made 0.6 s ago: they still count')
  t.equal(wsAt(partly, now + 420), 'WsAccepted', 'until a second after they were made, not after they arrived')
  const ahead = consumedElsewhere(state, { type: 'ConsumedElsewhere', full: 0, archive: 0, messages: 0, connects: 15, connectedAt: now + 5_000 }, now)
  t.same(ahead.ws.recentConnects, Array(15).fill(now), 'a sender whose clock is ahead: counted from now')
})
