import t from 'tap'
import { HeavyCallsBusy } from '../../src/gateway/errors.js'
import { HeavyCalls } from '../../src/gateway/heavy-calls.js'
import type { KeyContext } from '../../src/gateway/key-directory.js'

// The bound itself: slots per account, handed to the oldest waiting call, refused after the wait.
const keyOf = (accountId: string, heavyCallsAtOnce?: number | null) =>
  ({ account: { accountId }, plan: { id: 'tier-3', limits: heavyCallsAtOnce === undefined ? {} : { heavyCallsAtOnce } } }) as unknown as KeyContext

/** A call that runs until `finish()` is called. */
function pending() {
  let finish!: (v: string) => void
  const promise = new Promise<string>((resolve) => (finish = resolve))
  return { promise, finish }
}

t.test('a freed slot goes to the oldest waiting call; the gauge counts what runs', async (t) => {
  // A long wait: the waiting calls get their slot when one frees, never by the timer.
  const heavy = new HeavyCalls({ atOnce: 1, waitMs: 60_000 })
  const slot = heavy.slotFor(keyOf('acc_a'))!
  const first = pending()
  const order: string[] = []
  const a = slot.run(() => first.promise)
  const b = slot.run(async () => {
    order.push('b')
    return 'b'
  })
  const c = slot.run(async () => {
    order.push('c')
    return 'c'
  })
  await Promise.resolve()
  t.same(order, [], 'both wait while the first runs')
  t.equal(heavy.runningByPlan().get('tier-3'), 1)
  first.finish('a')
  t.same(await Promise.all([a, b, c]), ['a', 'b', 'c'])
  t.same(order, ['b', 'c'], 'oldest first')
  t.equal(heavy.runningByPlan().get('tier-3'), 0)
})

t.test('accounts are bounded apart; a plan may set its own bound, or none', async (t) => {
  const heavy = new HeavyCalls({ atOnce: 1, waitMs: 0 })
  const held = pending()
  const first = heavy.slotFor(keyOf('acc_a'))!.run(() => held.promise)
  t.equal(await heavy.slotFor(keyOf('acc_b'))!.run(async () => 'other'), 'other', 'another account is not held up')
  await t.rejects(
    heavy.slotFor(keyOf('acc_a'))!.run(async () => 'x'),
    HeavyCallsBusy,
    'the same account is refused after its wait',
  )
  const own = heavy.slotFor(keyOf('acc_c', 2))!
  const two = pending()
  const c1 = own.run(() => two.promise)
  t.equal(await own.run(async () => 'second'), 'second', "a plan's own bound of 2")
  t.equal(heavy.slotFor(keyOf('acc_d', null)), undefined, 'null: no bound')
  held.finish('a')
  two.finish('c')
  t.same(await Promise.all([first, c1]), ['a', 'c'])
})

t.test('a refused call says how many and how long, and a failing call frees its slot', async (t) => {
  const heavy = new HeavyCalls({ atOnce: 1, waitMs: 0 })
  const slot = heavy.slotFor(keyOf('acc_a'))!
  await t.rejects(
    slot.run(async () => {
      throw new Error('node failed')
    }),
    { message: 'node failed' },
  )
  const held = pending()
  const running = slot.run(() => held.promise)
  await t.rejects(
    slot.run(async () => 'x'),
    { name: 'HeavyCallsBusy', max: 1, waitedMs: 0 },
  )
  held.finish('done')
  t.equal(await running, 'done')
  t.equal(await slot.run(async () => 'free again'), 'free again')
})
