import t from 'tap'
import { FakeClock } from '../helpers/fake-clock.js'
import { NodeHealth } from '../../src/upstream/health.js'

t.test('an error rate over the bound takes a node out, though failures are never consecutive', async (t) => {
  const clock = new FakeClock()
  const health = new NodeHealth({ failureThreshold: 3, maxErrorRate: 0.5, errorWindow: 10, cooldownMs: 1_000, clock })
  // fail, fail, ok, fail, fail, ok …: 2 of 3 failed, never 3 in a row.
  for (let i = 0; i < 9; i++) {
    health.begin()
    if (i % 3 === 2) health.succeeded()
    else health.failed()
    t.ok(health.available(), `call ${i}: the window is not full yet`)
  }
  health.begin()
  health.failed()
  t.equal(health.outReason(), 'error-rate')
  t.notOk(health.available())
  clock.advance(1_000)
  health.begin()
  health.succeeded()
  t.ok(health.up(), 'a successful probe lets it in')
  health.begin()
  health.failed()
  t.ok(health.available(), 'with its old failures forgotten')
})

t.test('a node too far behind is out until it is within half the bound', async (t) => {
  const health = new NodeHealth({ maxLagBlocks: 10 })
  health.observeLag(10)
  t.ok(health.available(), 'at the bound: in')
  health.observeLag(11)
  t.equal(health.outReason(), 'behind')
  t.notOk(health.available())
  health.observeLag(6)
  t.notOk(health.available(), 'catching up, not there yet')
  health.observeLag(5)
  t.ok(health.up())
  t.equal(health.lag(), 5)
})
