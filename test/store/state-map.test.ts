import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { StateStore } from '../../src/store/state-store.js'
import { tempDir } from '../projections/fixtures.js'

/*
 * The state store's file is mapped once, with room to grow. Left to lmdb-js, the map started at
 * 128 KiB and was mapped anew each time the file outgrew it, and the earlier maps stayed mapped
 * with every page read through them: a replay of a week of usage (a 105 MiB file) kept 207 MiB of
 * it resident. Here a store grows to about 30 MB over many transactions and every row is read
 * back, as the replay's digest does: the process must hold one map of the file, and the file
 * must be only as large as what it holds.
 */

const MB = 1024 * 1024

/** The mappings of `file` in this process (/proc/self/smaps), each with its resident KiB. */
function mappingsOf(file: string): Array<{ sizeKiB: number; rssKiB: number }> {
  const out: Array<{ sizeKiB: number; rssKiB: number }> = []
  let current: { sizeKiB: number; rssKiB: number } | undefined
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) {
      current = line.endsWith(` ${file}`) ? { sizeKiB: 0, rssKiB: 0 } : undefined
      if (current) out.push(current)
    } else if (current && line.startsWith('Size:')) current.sizeKiB = Number(line.split(/\s+/)[1])
    else if (current && line.startsWith('Rss:')) current.rssKiB = Number(line.split(/\s+/)[1])
  }
  return out
}

t.test(
  'a store that grows to 30 MB is one map of its file, and its file only as large as its pages',
  { skip: !existsSync('/proc/self/smaps') && 'needs /proc (Linux)' },
  async (t) => {
    const path = join(tempDir(t, 'state-map'), 'state')
    const store = StateStore.open(path)
    t.teardown(() => store.close())
    const wallet = (n: number): string => `0x${n.toString(16).padStart(40, '0')}`
    // 40,000 accounts of ~500 bytes, in transactions of 1,000: the file grows past many doublings of a 128 KiB map.
    for (let first = 0; first < 40_000; first += 1_000) {
      store.write((w) => {
        for (let n = first; n < first + 1_000; n++) {
          w.putAccount({ accountId: `acc_${n}`, wallet: wallet(n), createdAt: n, plan: null, nodes: [], activeKeyId: `key_${'k'.repeat(400)}_${n}` })
        }
      })
    }
    let read = 0
    for (const entry of store.entries()) if (entry.db === 'accounts') read++
    t.equal(read, 40_000, 'every account read back')
    const file = join(path, 'data.mdb')
    const bytes = statSync(file).size
    t.ok(bytes > 16 * MB && bytes < 64 * MB, `the file holds what was written: ${(bytes / MB).toFixed(1)} MB`)
    const maps = mappingsOf(file)
    const resident = maps.reduce((sum, m) => sum + m.rssKiB, 0)
    t.equal(
      maps.length,
      1,
      `one map of the file (${maps.map((m) => `${Math.round(m.sizeKiB / 1024)} MiB, ${Math.round(m.rssKiB / 1024)} MiB resident`).join('; ')})`,
    )
    t.ok(resident * 1024 <= bytes, `no more of the file resident than the file: ${(resident / 1024).toFixed(1)} MiB of ${(bytes / MB).toFixed(1)} MB`)
  },
)
