import t from 'tap'
import { open } from 'lmdb'
import { BufferedTable } from '../../src/store/buffered-table.js'
import { tempDir } from '../projections/fixtures.js'

/*
 * BufferedTable appends the keys that sort after the db's last key (MDB_APPEND). LMDB refuses an
 * append that is not after its last key and the put then writes nothing, so every key must end
 * up written whatever its order: before the last key, after it, removed, and where string order
 * is not LMDB's (UTF-16 units against UTF-8 bytes).
 */

t.test('every pending key is written, whether it is appended or put, across transactions', async (t) => {
  const dir = tempDir(t, 'append')
  const root = open({ path: dir, maxDbs: 2 })
  t.teardown(() => root.close())
  const db = root.openDB<number, string>('rows', { encoding: 'msgpack' })
  const table = new BufferedTable(db)
  const expected = new Map<string, number>()
  const write = (entries: Array<[string, number | undefined]>): void => {
    root.transactionSync(() => {
      for (const [key, value] of entries) {
        if (value === undefined) {
          table.remove(key)
          expected.delete(key)
        } else {
          table.put(key, value)
          expected.set(key, value)
        }
      }
      table.flush()
    })
  }
  write([
    ['0002|b', 1],
    ['0001|a', 2],
  ])
  // Before the last key, equal to it, after it, and a removal of a key after it.
  write([
    ['0000|z', 3],
    ['0002|b', 4],
    ['0003|c', 5],
    ['0004|d', undefined],
    ['0005|e', 6],
  ])
  // '\uFF01' sorts after '\u{1F600}' in UTF-16 units but before it in UTF-8 bytes (EF against F0).
  write([['\u{1F600}', 7]])
  write([
    ['\uFF01', 8],
    ['\u{1F601}', 9],
  ])
  // Written out within a transaction (BufferedTable.writeOut), then more after it.
  root.transactionSync(() => {
    table.put('0006|f', 10)
    table.writeOut()
    table.put('0007|g', 11)
    table.put('0001|a', 12)
    table.flush()
  })
  expected.set('0006|f', 10).set('0007|g', 11).set('0001|a', 12)
  const held = new Map<string, number>()
  for (const { key, value } of db.getRange({})) held.set(key, value)
  t.same(Object.fromEntries([...held].sort()), Object.fromEntries([...expected].sort()))
})
