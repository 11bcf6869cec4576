import t from 'tap'
import { initialIpState, isIdle, recordRejected, throttledFor, type IpState } from '../../actors/ip/ip-throttle.js'

const limits = { rejections: 100, windowMs: 10_000, durationMs: 60_000 }
const T0 = 1_700_000_000_000

/** given rejections at these times (ms from T0), when one more comes, then… */
function given(events: Array<[number, number]>): IpState {
  let state = initialIpState()
  for (const [at, calls] of events) state = recordRejected(state, calls, T0 + at, limits).state
  return state
}

t.test('rejections under the threshold within the window do not throttle', async (t) => {
  const state = given([
    [0, 50],
    [5_000, 49],
  ])
  t.equal(throttledFor(state, T0 + 5_000), 0)
})

t.test('crossing the threshold within the window throttles for the duration', async (t) => {
  const state = given([[0, 60]])
  const { state: next, decision } = recordRejected(state, 40, T0 + 9_000, limits)
  t.same(decision, { type: 'Throttled', until: T0 + 9_000 + 60_000, rejections: 100 })
  t.equal(throttledFor(next, T0 + 10_000), 59_000)
  t.equal(throttledFor(next, T0 + 69_000), 0, 'lifted by itself')
})

t.test('rejections that left the window do not count', async (t) => {
  const state = given([[0, 60]])
  const { decision } = recordRejected(state, 40, T0 + 11_000, limits)
  t.same(decision, { type: 'None' })
})

t.test('one throttle per crossing: further rejections while throttled decide nothing', async (t) => {
  const { state } = recordRejected(initialIpState(), 100, T0, limits)
  const again = recordRejected(state, 500, T0 + 1_000, limits)
  t.same(again.decision, { type: 'None' })
  t.equal(again.state.throttledUntil, T0 + 60_000)
})

t.test('an IP with nothing in the window and no throttle is idle', async (t) => {
  const state = given([[0, 10]])
  t.notOk(isIdle(state, T0 + 1_000, limits))
  t.ok(isIdle(state, T0 + 20_000, limits))
})
