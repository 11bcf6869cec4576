import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { StoredEvent } from '../src/events/types.js'
import { StateStore } from '../src/store/state-store.js'
import { usageProjection } from '../src/usage/usage-projection.js'
import { intervalUsage } from './lib/interval-usage.js'

/**
 * What applying usage costs a follower, in one process and without NATS: `--accounts` keys, each
 * reported by `--instances` instances once a second, committed every `--hold` seconds (one
 * transaction), for `--seconds` seconds of event time (the first fifth, at most 60 s, is warm-up).
 * Prints CPU µs per event: the projection's apply, timed inside the transaction; the flush (rows
 * and ids written into LMDB) and the commit together, timed from there to the write's return; and
 * the process's whole CPU over the measured events, LMDB's sync thread and V8's included.
 *
 *   node --import tsx bench/usage-apply-cost.ts [--accounts 200] [--instances 1] [--hold 1] [--seconds 300]
 */
const { values } = parseArgs({
  options: {
    accounts: { type: 'string', default: '200' },
    instances: { type: 'string', default: '1' },
    hold: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '300' },
  },
})
const ACCOUNTS = Number(values.accounts)
const INSTANCES = Number(values.instances)
const HOLD = Number(values.hold)
const SECONDS = Number(values.seconds)

const dir = mkdtempSync(join(tmpdir(), 'tollgate-usage-apply-'))
const store = StateStore.open(join(dir, 'state'))
let seq = 0
const eventsOf = (second: number): StoredEvent[] => {
  const out: StoredEvent[] = []
  const intervalStart = 1_700_000_000_000 + second * 1000
  for (let instance = 0; instance < INSTANCES; instance++)
    for (const event of intervalUsage(intervalStart, ACCOUNTS, `i${instance}`)) out.push({ seq: ++seq, event })
  return out
}
const spent = { apply: 0, writeTotal: 0 }
let events = 0
let total0: NodeJS.CpuUsage | undefined
const warm = Math.min(60, SECONDS / 5)
for (let s = 0; s < SECONDS; s += HOLD) {
  const batch: StoredEvent[] = []
  for (let k = 0; k < HOLD; k++) batch.push(...eventsOf(s + k))
  const measured = s >= warm
  if (measured && total0 === undefined) total0 = process.cpuUsage()
  const t0 = process.cpuUsage()
  let t1 = t0
  store.write((writer) => {
    for (const { event } of batch) usageProjection.apply(event, writer)
    writer.setCheckpoint(batch.at(-1)!.seq)
    t1 = process.cpuUsage()
  })
  const t2 = process.cpuUsage()
  if (!measured) continue
  events += batch.length
  spent.apply += t1.user + t1.system - t0.user - t0.system
  spent.writeTotal += t2.user + t2.system - t0.user - t0.system
}
await new Promise((r) => setTimeout(r, 500))
const total1 = process.cpuUsage(total0)
const per = (us: number) => Math.round((us / events) * 10) / 10
process.stdout.write(
  `accounts ${ACCOUNTS} instances ${INSTANCES} hold ${HOLD}s: ${events} events; CPU µs per event: apply ${per(spent.apply)}, flush and commit ${per(spent.writeTotal - spent.apply)}, all ${per(spent.writeTotal)}; the process's CPU over the same events (its threads included) ${per(total1.user + total1.system)}\n`,
)
await store.close()
rmSync(dir, { recursive: true, force: true })
