/**
 * `node --import tsx bench/state-tables.ts <state folder>`: what an LMDB state store holds, table by
 * table (lmdb-js getStats(): entries and pages; keys and values summed as stored), and the file's
 * pages in use and free. Used for docs/state.md's figures after `npm run bench:replay`.
 */
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { open } from 'lmdb'
import { STATE_DB_NAMES } from '../src/store/state-store.js'

const path = process.argv[2]
if (!path) throw new Error('usage: node --import tsx bench/state-tables.ts <state folder (holding data.mdb)>')
const root = open({ path, maxDbs: 32, readOnly: true })
interface DbStats {
  pageSize: number
  treeDepth: number
  treeBranchPageCount: number
  treeLeafPageCount: number
  entryCount: number
  overflowPages: number
}
const rows = []
let pagesInTables = 0
for (const name of STATE_DB_NAMES) {
  const db = root.openDB<unknown, string>(name, { encoding: 'binary' })
  const stats = db.getStats() as DbStats
  let keyBytes = 0
  let valueBytes = 0
  for (const { key, value } of db.getRange({})) {
    keyBytes += Buffer.byteLength(key)
    valueBytes += (value as Uint8Array).length
  }
  const pages = stats.treeBranchPageCount + stats.treeLeafPageCount + stats.overflowPages
  pagesInTables += pages
  rows.push({ table: name, entries: stats.entryCount, pages, kib: Math.round((pages * stats.pageSize) / 1024), keyBytes, valueBytes })
}
const env = root.getStats() as DbStats & { lastPageNumber?: number }
const fileBytes = statSync(join(path, 'data.mdb')).size
rows.sort((a, b) => b.pages - a.pages)
const mib = (b: number): string => (b / 1048576).toFixed(1)
process.stdout.write('| table | entries | pages (4 KiB) | MiB | key bytes | value bytes |\n|---|---:|---:|---:|---:|---:|\n')
for (const r of rows) process.stdout.write(`| ${r.table} | ${r.entries} | ${r.pages} | ${mib(r.kib * 1024)} | ${r.keyBytes} | ${r.valueBytes} |\n`)
process.stdout.write(
  `\npages in tables: ${pagesInTables} (${mib(pagesInTables * env.pageSize)} MiB); last page used: ${env.lastPageNumber ?? '?'} ` +
    `(${env.lastPageNumber === undefined ? '?' : mib((env.lastPageNumber + 1) * env.pageSize)} MiB); data.mdb ${mib(fileBytes)} MiB\n`,
)
process.stdout.write(JSON.stringify(env) + '\n')
await root.close()
