import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ImmutableCache } from '../../src/cache/immutable-cache.js'

const dir = await mkdtemp(join(tmpdir(), 'tollgate-evict-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))

t.test('the cache stays under maxBytes, oldest out first, hit entries get a second chance', async (t) => {
  const cache = ImmutableCache.open(join(dir, 'a'), { maxBytes: 10_000 })
  t.teardown(() => cache.close())
  const body = (i: number) => `{"jsonrpc":"2.0","id":1,"result":"${String(i).padStart(990, '0')}"}`
  for (let i = 0; i < 5; i++) cache.put('eth-1', 0, `call-${i}`, body(i))
  await cache.flushed()
  t.ok(cache.get('eth-1', 0, 'call-0'), 'call 0 is stored, and now hit')
  for (let i = 5; i < 30; i++) {
    cache.put('eth-1', 0, `call-${i}`, body(i))
    await cache.flushed()
  }
  const stats = cache.stats()
  t.ok(stats.bytes <= 10_000, `${stats.bytes} bytes stored`)
  t.ok(stats.evictions > 0)
  t.equal(cache.get('eth-1', 0, 'call-1'), undefined, 'the oldest entry not hit is gone')
  t.ok(cache.get('eth-1', 0, 'call-29'), 'the newest is there')
})

t.test('invalidating a network makes its entries unreachable, not the others', async (t) => {
  const cache = ImmutableCache.open(join(dir, 'b'), { maxBytes: 1_000_000 })
  t.teardown(() => cache.close())
  cache.put('eth-1', 0, 'x', '{"result":1}')
  cache.put('bsc-1', 0, 'x', '{"result":2}')
  await cache.flushed()
  t.equal(await cache.invalidate('eth-1'), 1)
  t.equal(cache.get('eth-1', cache.generation('eth-1'), 'x'), undefined)
  t.equal(cache.get('bsc-1', cache.generation('bsc-1'), 'x'), '{"result":2}')
})

t.test('a hit served from memory still gives the entry its second chance in the shared store', async (t) => {
  const path = join(dir, 'c')
  const cache = ImmutableCache.open(path, { maxBytes: 10_000 })
  t.teardown(() => cache.close())
  const body = (i: number) => `{"jsonrpc":"2.0","id":1,"result":"${String(i).padStart(990, '0')}"}`
  // The hot layer holds a quarter of maxBytes: the last two answers stored.
  for (let i = 0; i < 2; i++) cache.put('eth-1', 0, `call-${i}`, body(i))
  await cache.flushed()
  t.equal(cache.get('eth-1', 0, 'call-0'), body(0), 'hit, from the hot layer')
  for (let i = 2; i < 12; i++) {
    cache.put('eth-1', 0, `call-${i}`, body(i))
    await cache.flushed()
  }
  t.ok(cache.stats().evictions > 0, 'the store evicted')
  // What another process sees: the shared LMDB store, without this one's memory.
  const other = ImmutableCache.open(path, { maxBytes: 10_000 })
  t.teardown(() => other.close())
  t.equal(other.get('eth-1', 0, 'call-0'), body(0), 'the hit entry was kept')
  t.equal(other.get('eth-1', 0, 'call-1'), undefined, 'the oldest entry not hit was evicted')
})
