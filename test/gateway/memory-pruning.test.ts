import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { FakeClock } from '../helpers/fake-clock.js'
import { FILTER_IDLE_MS, FilterPins } from '../../src/gateway/filter-pins.js'
import { IpDirectory } from '../../src/gateway/ip-directory.js'
import { StateStore } from '../../src/store/state-store.js'

// What the gateway keeps in memory per client IP (rate-limit rejections, throttles) and per filter
// (the node that holds it) is swept once its window has passed (the gateway sweeps every few
// seconds): a fake clock moves past the window, and what was inside it is kept until then.

const limits = { rejections: 100, windowMs: 10_000, durationMs: 60_000 }

t.test('IPs: rejections are forgotten after their window, throttles after they lift; not before', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-ips-'))
  const store = StateStore.open(join(dir, 'state'))
  t.teardown(async () => {
    await store.close()
    await rm(dir, { recursive: true, force: true })
  })
  const clock = new FakeClock()
  const throttled: string[] = []
  const ips = new IpDirectory(store, clock, limits, (ip) => throttled.push(ip))
  for (let i = 0; i < 1000; i++) ips.rejected(`10.0.${i >> 8}.${i & 255}`, 60)
  ips.sweep()
  t.equal(ips.tracking(), true, '1,000 IPs under the threshold, inside the window: kept')

  clock.advance(5_000)
  ips.sweep()
  ips.rejected('10.0.0.1', 40)
  t.same(throttled, ['10.0.0.1'], 'a sweep inside the window forgot nothing: 60 + 40 rejections throttle')

  clock.advance(limits.windowMs)
  ips.sweep()
  t.equal(ips.tracking(), true, 'the throttled IP is kept while its throttle lasts')
  t.ok(ips.check('10.0.0.1'), 'and refused')
  t.equal(ips.check('10.0.0.2'), undefined)

  clock.advance(limits.durationMs)
  ips.sweep()
  t.equal(ips.tracking(), false, 'once the throttle lifted and the window passed, nothing is left')
  t.equal(ips.check('10.0.0.1'), undefined)
})

t.test('filter pins: idle ones are swept after the node forgets them, used ones are kept', async (t) => {
  const clock = new FakeClock()
  const pins = new FilterPins(clock)
  const caps = { maxFiltersPerKey: 1000, maxFiltersPerAccount: 1000 }
  for (let i = 0; i < 1000; i++) {
    if (pins.reserve('eth-1', 'key-1', 'account-1', caps).ok) pins.made('eth-1', 'key-1', { filterId: `0x${i.toString(16)}`, node: 'node-a', kind: 'full' })
  }
  t.equal(pins.size, 1000)
  clock.advance(FILTER_IDLE_MS - 1)
  t.equal(pins.nodeOf('eth-1', '0x7', 'key-1'), 'node-a', 'a filter polled within its idle time')
  pins.sweep()
  t.equal(pins.size, 1000, 'nothing swept inside the idle time')
  clock.advance(2)
  pins.sweep()
  t.equal(pins.size, 1, 'past it only the polled one is left')
  t.equal(pins.nodeOf('eth-1', '0x7', 'key-1'), 'node-a')
  t.equal(pins.nodeOf('eth-1', '0x8', 'key-1'), undefined)
})
