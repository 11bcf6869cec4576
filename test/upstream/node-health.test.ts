import t from 'tap'
import { FakeClock } from '../helpers/fake-clock.js'
import { NodeHealth } from '../../src/upstream/health.js'

const COOLDOWN = 1_000

function given(failures: number) {
  const clock = new FakeClock()
  const health = new NodeHealth({ failureThreshold: 3, cooldownMs: COOLDOWN, clock })
  for (let i = 0; i < failures; i++) {
    health.begin()
    health.failed()
  }
  return { clock, health }
}

t.test('up until the threshold of consecutive failures', async (t) => {
  const { health } = given(2)
  t.ok(health.available())
  t.ok(health.up())
  health.begin()
  health.succeeded()
  health.begin()
  health.failed()
  t.ok(health.available(), 'a success in between starts the count again')
})

t.test('out for the cooldown after the threshold', async (t) => {
  const { clock, health } = given(3)
  t.notOk(health.available())
  t.notOk(health.up())
  clock.advance(COOLDOWN - 1)
  t.notOk(health.available(), 'still cooling down')
})

t.test('after the cooldown one probe at a time; its success lets the node in', async (t) => {
  const { clock, health } = given(3)
  clock.advance(COOLDOWN)
  t.ok(health.available(), 'a probe may go')
  health.begin()
  t.notOk(health.available(), 'no second call while the probe runs')
  health.succeeded()
  t.ok(health.available())
  t.ok(health.up())
})

t.test('a failed probe starts another cooldown', async (t) => {
  const { clock, health } = given(3)
  clock.advance(COOLDOWN)
  health.begin()
  health.failed()
  t.notOk(health.available())
  clock.advance(COOLDOWN - 1)
  t.notOk(health.available())
  clock.advance(1)
  t.ok(health.available())
})

t.test('late failures of calls sent before the node went out do not extend the cooldown', async (t) => {
  const { clock, health } = given(3)
  clock.advance(COOLDOWN / 2)
  health.failed()
  clock.advance(COOLDOWN / 2)
  t.ok(health.available())
})

// /metrics reports up() as tollgate_upstream_healthy: a probe must not read as the node being back
// (each 1 restarted TollgateNoHealthyNode's minute, issue 42). The probe is its own state.
t.test('while it is probed the node is half-open, not up; each probe is counted', async (t) => {
  const { clock, health } = given(3)
  t.notOk(health.halfOpen(), 'cooling down: out, not half-open')
  clock.advance(COOLDOWN)
  t.ok(health.halfOpen(), 'cooldown over: half-open, the next call probes it')
  t.notOk(health.up(), 'and not up, though a call may go')
  health.begin()
  t.equal(health.probes, 1)
  t.ok(health.halfOpen(), 'the probe runs')
  t.notOk(health.up())
  health.failed()
  t.notOk(health.halfOpen(), 'it failed: a new cooldown')
  t.notOk(health.up())
  clock.advance(COOLDOWN)
  health.begin()
  health.succeeded()
  t.equal(health.probes, 2)
  t.notOk(health.halfOpen(), 'the second probe succeeded: in')
  t.ok(health.up())
  health.begin()
  t.equal(health.probes, 2, 'a call to a node that is up is no probe')
})
