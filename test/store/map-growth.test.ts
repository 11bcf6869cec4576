import { spawn } from 'node:child_process'
import { statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { open } from 'lmdb'
import { ImmutableCache } from '../../src/cache/immutable-cache.js'
import { Outbox } from '../../src/events/outbox.js'
import { makeEvent } from '../../src/events/make-event.js'
import type { UsageRecorded } from '../../src/events/types.js'
import { openLedger } from '../helpers/ledger.js'
import { answerOf } from './map-growth-data.js'
import { usageTotals } from '../../src/usage/usage-queries.js'
import { childScript } from '../helpers/built.js'

/*
 * What happens when an LMDB environment reaches its map size. Plain LMDB refuses the write with
 * MDB_MAP_FULL until the map is set larger; lmdb-js (3.x) patches LMDB to grow the map itself
 * (about twice what is used) when a write needs more, and when a transaction begins after another
 * process grew it. lmdb-js opens every environment with a 128 KiB map; Tollgate sets none but the
 * state store's (mapped once with room to spare: see test/store/state-map.test.ts), so the other
 * folders below start there and must take tens of MB. If lmdb-js ever stops growing the map,
 * these writes fail with MDB_MAP_FULL and this test says which store.
 */

const INITIAL_MAP = 128 * 1024
const MB = 1024 * 1024

async function tempDir(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-map-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** The size of an environment's data file (LMDB extends it as the map grows). */
const dataFileBytes = (folder: string): number => statSync(join(folder, 'data.mdb')).size

t.test('an environment opened with a 64 KiB map takes 24 MB: async puts, a large transaction, a value larger than the map', async (t) => {
  const path = join(await tempDir(t), 'env')
  const root = open({ path, maxDbs: 2, mapSize: 64 * 1024 })
  const db = root.openDB<string, string>({ name: 't' })
  const mapSize = (): number => (root.getStats() as { mapSize: number }).mapSize
  t.equal(mapSize(), 64 * 1024, 'the map starts at 64 KiB')
  const value = 'v'.repeat(4000)
  for (let i = 0; i < 4000; i++) void db.put(`put-${i}`, value) // 16 MB, committed in batches
  await db.committed
  root.transactionSync(() => {
    for (let i = 0; i < 1000; i++) void db.put(`txn-${i}`, value) // 4 MB in one transaction
  })
  await db.put('big', 'b'.repeat(4 * MB)) // one value of 64 times the initial map
  t.equal(db.getCount(), 5001)
  t.equal(db.get('put-3999'), value)
  t.equal(db.get('txn-999'), value)
  t.equal(db.get('big')?.length, 4 * MB)
  t.ok(mapSize() > 24 * MB, `the map grew to ${(mapSize() / MB).toFixed(1)} MB`)
  await root.close()
  const again = open({ path, maxDbs: 2, mapSize: 64 * 1024 })
  t.equal(again.openDB({ name: 't' }).getCount(), 5001, 'reopened with the same small map size, everything is there')
  await again.close()
})

t.test('the event log, the outbox and the state store grow past their initial map without losing an event', async (t) => {
  const { dir, log, store, projector } = await openLedger(t)
  // Closed before the ledger's log (teardowns run last first).
  const outbox = Outbox.open(join(dir, 'outbox'), log)
  t.teardown(() => outbox.close())
  // 5,000 keys of 5,000 accounts, 4 intervals each an hour apart: rows in every usage table.
  const T0 = 1_700_000_000_000
  const events = Array.from({ length: 20_000 }, (_, i) => {
    const n = i % 5000
    const intervalStart = T0 + Math.floor(i / 5000) * 3_600_000
    const scope = { accountId: `acc-${n}`, keyId: `key-${n}`, network: 'eth-1', kind: 'full' as const, instance: 'gw-1', intervalStart }
    const counts = { intervalMs: 1000, requests: 1 + (i % 7), errors: 0, bytesIn: 10, bytesOut: 20 }
    return makeEvent<UsageRecorded>({ type: 'UsageRecorded', ...scope, ...counts }, intervalStart + 1000)
  })
  // Through the outbox, as the gateway publishes: it stores each batch, then appends it to the log.
  for (let i = 0; i < events.length; i += 500) outbox.publish(events.slice(i, i + 500))
  await outbox.flush(60_000)
  t.equal(outbox.pending(), 0, 'the outbox delivered everything')
  t.equal(await log.lastSeq(), events.length, 'every event is in the log')
  await projector.catchUp()
  t.equal(store.checkpoint(), events.length, 'the state store projected every event')
  t.equal(
    usageTotals(store).requests,
    events.reduce((n, e) => n + e.requests, 0),
    'and counted every one, once',
  )
  for (const folder of ['log', 'outbox', 'state']) {
    const bytes = dataFileBytes(join(dir, folder))
    t.ok(bytes > 4 * INITIAL_MAP, `${folder}: ${(bytes / MB).toFixed(1)} MB, past lmdb-js's initial 128 KiB map`)
  }
})

t.test('the answer cache grows past its map, and a process sharing the folder reads what another grew it with', async (t) => {
  const path = join(await tempDir(t), 'cache')
  const COUNT = 400
  const BYTES = 32 * 1024 // 12.5 MB of answers in all
  // This process opens the cache first, with the initial map, then another process fills it.
  const cache = ImmutableCache.open(path, { maxBytes: 1 << 30 })
  t.teardown(() => cache.close())
  t.equal(cache.get('eth-1', 0, 'call-0'), undefined, 'empty at first')
  const script = join(import.meta.dirname, 'fixtures', 'cache-writer-child.ts')
  const args = [...(await childScript(script)), path, String(COUNT), String(BYTES)]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  t.equal(code, 0, 'the other process stored its answers without an error')
  t.equal(out, 'stored\n')
  t.ok(dataFileBytes(path) > COUNT * BYTES, `the file grew to ${(dataFileBytes(path) / MB).toFixed(1)} MB`)
  let found = 0
  for (let i = 0; i < COUNT; i++) if (cache.get('eth-1', 0, `call-${i}`) === answerOf(i, BYTES)) found++
  t.equal(found, COUNT, 'this process reads every answer, past the map it opened with')
  t.equal(cache.stats().entries, COUNT)
  // And this process stores more on top.
  for (let i = COUNT; i < COUNT + 100; i++) cache.put('eth-1', 0, `call-${i}`, answerOf(i, BYTES))
  await cache.flushed()
  t.equal(cache.stats().entries, COUNT + 100)
})
