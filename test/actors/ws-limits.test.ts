import t from 'tap'
import { accountActor } from '../helpers/given.js'
import { DEFAULT_WS_KEY_LIMITS, type WsCommand, type WsDecision, type WsKeyLimits } from '../../actors/account/ws-limits.js'

/**
 * given(commands already handled) → when(command) → then(decision), with a fake clock: the
 * WebSocket limits of the spec's Limits table at their thresholds, without a socket.
 */
function given(history: WsCommand[] = [], ws: Partial<WsKeyLimits> = {}) {
  const { clock, actor, wsMany } = accountActor({ full: 500, archive: 250 }, { ws, history })
  return { clock, actor, when: (command: WsCommand) => actor.ws(command), many: wsMany }
}
const connect: WsCommand = { type: 'WsConnect' }
const disconnect: WsCommand = { type: 'WsDisconnect' }
const message: WsCommand = { type: 'WsMessage', calls: 1 }
const times = (n: number, c: WsCommand): WsCommand[] => Array.from({ length: n }, () => c)
const types = (ds: WsDecision[]) => ds.map((d) => (d.type === 'WsRefused' || d.type === 'WsMessageRejected' ? d.reason : d.type))

t.test('50 concurrent connections; the 51st is refused; closing one makes room', async (t) => {
  // Opened over several seconds so that the new-connection rate is not what refuses.
  const g = given()
  for (let i = 0; i < 50; i++) {
    t.equal(g.when(connect).type, 'WsAccepted')
    g.clock.advance(100)
  }
  t.same(g.when(connect), { type: 'WsRefused', reason: 'ws-connections', limit: 50, retryAfterMs: 0 })
  t.same(g.when(disconnect), { type: 'WsClosed', open: 49 })
  t.same(g.when(connect), { type: 'WsAccepted', open: 50 })
})

t.test('15 new connections in one second pass; the 16th starts a 60 s cooldown', async (t) => {
  const g = given()
  t.same(
    types(g.many(15, connect)),
    times(15, connect).map(() => 'WsAccepted'),
  )
  t.same(g.when(connect), {
    type: 'WsRefused',
    reason: 'ws-connection-rate',
    retryAfterMs: 60_000,
    until: g.clock.now() + 60_000,
    connections: 16,
    windowMs: 1000,
  })
  g.clock.advance(59_999)
  t.same(g.when(connect), { type: 'WsRefused', reason: 'ws-cooldown', retryAfterMs: 1, until: g.clock.now() + 1 }, 'blocked to the last ms')
  g.clock.advance(1)
  t.equal(g.when(connect).type, 'WsAccepted', 'the cooldown is over')
})

t.test('the one-second window slides: 15 per second for ever is fine', async (t) => {
  const g = given()
  for (let s = 0; s < 5; s++) {
    t.ok(
      g.many(15, connect).every((d) => d.type === 'WsAccepted'),
      `second ${s}`,
    )
    for (let i = 0; i < 15; i++) g.when(disconnect)
    g.clock.advance(1000)
  }
  g.many(14, connect)
  g.clock.advance(999)
  t.equal(g.when(connect).type, 'WsAccepted', '14 at t, 1 at t+999: 15 within a second')
  t.equal(g.when(connect).type, 'WsRefused', 'a 16th within the same second is not')
})

t.test('existing connections are not touched by the cooldown; closing still counts down', async (t) => {
  const g = given(times(16, connect))
  t.equal(g.actor.wsOpen, 15)
  t.same(g.when(disconnect), { type: 'WsClosed', open: 14 })
})

t.test('500 messages per second plus 10%: 550 pass at once, the 551st is throttled with -32005 data', async (t) => {
  const g = given()
  t.ok(
    g.many(550, message).every((d) => d.type === 'WsMessageAdmitted'),
    '550 admitted',
  )
  t.same(g.when(message), { type: 'WsMessageRejected', reason: 'ws-messages-throttled', retryAfterMs: 2, limit: 500 })
  g.clock.advance(1000)
  t.equal(g.many(551, message).filter((d) => d.type === 'WsMessageAdmitted').length, 550, 'a second later, 550 again')
})

t.test('a batch counts each of its calls', async (t) => {
  const g = given()
  t.same(g.when({ type: 'WsMessage', calls: 500 }), { type: 'WsMessageAdmitted' })
  t.equal(g.when({ type: 'WsMessage', calls: 51 }).type, 'WsMessageRejected')
  t.equal(g.when({ type: 'WsMessage', calls: 50 }).type, 'WsMessageAdmitted')
})

t.test('a flood past the limit gets at most 500 answers a second; the rest is dropped', async (t) => {
  const g = given(times(550, message))
  const decisions = g.many(600, message)
  t.equal(decisions.filter((d) => d.type === 'WsMessageRejected' && d.reason === 'ws-messages-throttled').length, 500)
  t.equal(decisions.filter((d) => d.type === 'WsMessageRejected' && d.reason === 'ws-messages-dropped').length, 100)
})

t.test('past the limit with no answer left, a message is dropped before it is read; a dropped batch spends what was left', async (t) => {
  const g = given([...times(550, message), ...times(500, message)])
  t.equal(g.actor.wsDropsUnread(), true, 'no call and no answer left: dropped whatever it holds')
  g.clock.advance(100) // 55 calls and 50 answers come back
  t.equal(g.actor.wsDropsUnread(), false)
  const big: WsCommand = { type: 'WsMessage', calls: 100 }
  t.same(
    types(g.many(50, big)),
    times(50, big).map(() => 'ws-messages-throttled'),
    'batches over what is left are answered while answers last',
  )
  t.equal(g.actor.wsDropsUnread(), false, '55 calls are still there: the next message must be read to know its cost')
  t.same(g.when(big), { type: 'WsMessageRejected', reason: 'ws-messages-dropped' })
  t.equal(g.actor.wsDropsUnread(), true, 'the dropped batch spent the 55: what follows is dropped unread')
  g.clock.advance(2)
  t.equal(g.actor.wsDropsUnread(), false, 'one call comes back after 1/550 s')
})

t.test('unlimited messages are never dropped unread', async (t) => {
  const g = given([], { messagesPerSecond: null })
  t.equal(g.actor.wsDropsUnread(), false)
})

t.test('unlimited messages (a Private Node plan)', async (t) => {
  const g = given([], { messagesPerSecond: null })
  t.ok(g.many(10_000, message).every((d) => d.type === 'WsMessageAdmitted'))
})

t.test('20 bad messages within a minute are tolerated; the 21st imposes a 5-minute penalty', async (t) => {
  const bad: WsCommand = { type: 'WsBadMessages', count: 1 }
  const g = given(times(19, bad))
  t.same(g.when(bad), { type: 'WsBadNoted', remaining: 0 }, 'the 20th')
  t.same(g.when(bad), { type: 'WsPenaltyStarted', until: g.clock.now() + 300_000, badMessages: 21, windowMs: 60_000 })
  t.same(g.when(message), { type: 'WsMessageRejected', reason: 'ws-penalty', retryAfterMs: 300_000, until: g.clock.now() + 300_000 })
  g.clock.advance(300_000)
  t.same(g.when(message), { type: 'WsMessageAdmitted' }, 'lifted after 5 minutes')
  t.same(g.when(bad), { type: 'WsBadNoted', remaining: 19 }, 'and the tolerance starts afresh')
})

t.test('bad messages spread out are tolerated (20 per minute refill)', async (t) => {
  const g = given()
  const bad: WsCommand = { type: 'WsBadMessages', count: 1 }
  for (let i = 0; i < 100; i++) {
    t.equal(g.when(bad).type, 'WsBadNoted')
    g.clock.advance(3_000)
  }
  t.equal(g.actor.state.ws.penaltyUntil, 0)
})

t.test('a cooldown and a penalty restored from the projection are enforced; the later end wins', async (t) => {
  const g = given()
  const now = g.clock.now()
  t.same(g.when({ type: 'WsBlocksRestored', cooldownUntil: now + 10_000, penaltyUntil: now + 20_000 }), {
    type: 'WsBlocksApplied',
    cooldownUntil: now + 10_000,
    penaltyUntil: now + 20_000,
  })
  t.match(g.when(connect), { reason: 'ws-cooldown', retryAfterMs: 10_000 })
  t.match(g.when(message), { reason: 'ws-penalty', retryAfterMs: 20_000 })
  g.when({ type: 'WsBlocksRestored', cooldownUntil: now + 1, penaltyUntil: 0 })
  t.equal(g.actor.state.ws.cooldownUntil, now + 10_000, 'an older fact does not shorten it')
})

t.test('a plan change keeps the message bucket level', async (t) => {
  const g = given(times(550, message))
  g.actor.updateLimits({ full: 2, archive: 0 }, { ...DEFAULT_WS_KEY_LIMITS, messagesPerSecond: 2 })
  t.equal(g.when(message).type, 'WsMessageRejected', 'a downgrade does not refill')
  g.clock.advance(1000)
  t.equal(types(g.many(3, message)).filter((x) => x === 'WsMessageAdmitted').length, 2, '2 + 10% a second, whole messages')
})
