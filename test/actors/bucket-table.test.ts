import t from 'tap'
import { BucketTable } from '../../actors/rate/bucket-table.js'
import { FakeClock } from '../helpers/fake-clock.js'

// A limit per client with a fake clock: the burst, the refill, Retry-After, and the bound on the
// clients it remembers. Time only moves when the test says so.

t.test('a client gets its burst, then one token every everyMs; the refusal says how long to wait', async (t) => {
  const clock = new FakeClock()
  const table = new BucketTable({ burst: 3, everyMs: 6_000 }, { maxEntries: 100 })
  const oks = [1, 2, 3, 4].map(() => table.take('203.0.113.7', clock.now()).ok)
  t.same(oks, [true, true, true, false])
  t.equal(table.take('203.0.113.7', clock.now()).retryAfterMs, 6_000)
  clock.advance(2_000)
  t.equal(table.take('203.0.113.7', clock.now()).retryAfterMs, 4_000)
  clock.advance(4_000)
  t.equal(table.take('203.0.113.7', clock.now()).ok, true, 'one token came back')
  t.equal(table.take('203.0.113.7', clock.now()).ok, false)
  t.equal(table.take('198.51.100.1', clock.now()).ok, true, 'another client has its own bucket')
})

t.test('peek answers what take would, and takes nothing', async (t) => {
  const clock = new FakeClock()
  const table = new BucketTable({ burst: 1, everyMs: 60_000 }, { maxEntries: 100 })
  t.equal(table.peek('a', clock.now()).ok, true)
  t.equal(table.peek('a', clock.now()).ok, true)
  t.equal(table.size, 0, 'nothing remembered')
  t.equal(table.take('a', clock.now()).ok, true)
  t.same(table.peek('a', clock.now()), { ...table.peek('a', clock.now()), ok: false, retryAfterMs: 60_000 })
})

t.test('clients whose bucket is full again are forgotten by the sweep, the others kept', async (t) => {
  const clock = new FakeClock()
  const table = new BucketTable({ burst: 2, everyMs: 10_000 }, { maxEntries: 100, sweepEveryMs: 1_000_000 })
  table.take('a', clock.now())
  table.take('b', clock.now())
  table.take('b', clock.now())
  clock.advance(10_000)
  t.equal(table.sweep(clock.now()), 1, "a's bucket refilled to 2")
  t.equal(table.size, 1)
  clock.advance(10_000)
  t.equal(table.sweep(clock.now()), 1, "b's too")
  t.equal(table.size, 0)
})

t.test('take sweeps by itself every sweepEveryMs', async (t) => {
  const clock = new FakeClock()
  const table = new BucketTable({ burst: 1, everyMs: 1_000 }, { maxEntries: 100, sweepEveryMs: 60_000 })
  for (let i = 0; i < 50; i++) table.take(`ip-${i}`, clock.now())
  t.equal(table.size, 50)
  clock.advance(60_000)
  table.take('new', clock.now())
  t.equal(table.size, 1, 'the 50 full buckets went; the new client stays')
})

t.test('at most maxEntries clients: the least recently seen goes, and comes back with a full bucket', async (t) => {
  const clock = new FakeClock()
  const table = new BucketTable({ burst: 1, everyMs: 3_600_000 }, { maxEntries: 3 })
  for (const ip of ['a', 'b', 'c']) t.equal(table.take(ip, clock.now()).ok, true)
  t.equal(table.take('a', clock.now()).ok, false, 'a is seen again (refused): now the most recent')
  t.equal(table.take('d', clock.now()).ok, true)
  t.equal(table.size, 3)
  t.equal(table.take('a', clock.now()).ok, false, 'a was kept: b, the least recently seen, went')
  t.equal(table.take('b', clock.now()).ok, true, 'b was forgotten: its bucket is full again')
})

t.test('a limit without a burst or a refill is refused at construction', async (t) => {
  t.throws(() => new BucketTable({ burst: 0, everyMs: 1_000 }, { maxEntries: 1 }), RangeError)
  t.throws(() => new BucketTable({ burst: 1, everyMs: 0 }, { maxEntries: 1 }), RangeError)
  t.throws(() => new BucketTable({ burst: 1, everyMs: 1 }, { maxEntries: 0 }), RangeError)
})
