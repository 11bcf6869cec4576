import { join } from 'node:path'
import { median, type Row } from './measure.js'
import { runNodeJson } from './processes.js'
import { startNats } from '../../harness/nats-server.js'
import type { BenchContext } from './context.js'

interface AppendResult {
  events: number
  eventsPerSec: number
  appendP50Us: number
  appendP99Us: number
}

const SCRIPT = join(import.meta.dirname, '..', 'scenarios', 'event-log-append.ts')

/**
 * UsageRecorded events per second into the embedded log and into JetStream (a nats-server the
 * harness starts on a free port with a temporary store), in batches of 100 and one at a time.
 * Rounds interleave the logs like the HTTP targets.
 */
export async function runEventLog(ctx: BenchContext): Promise<Row[]> {
  let nats: Awaited<ReturnType<typeof startNats>> | undefined
  try {
    nats = await startNats()
  } catch (err) {
    ctx.notes.push(`event-log/jetstream: skipped, ${(err as Error).message.split('\n')[0]}`)
  }
  try {
    const cases: Array<{ id: string; label: string; arg: Record<string, unknown> }> = []
    for (const batch of ctx.opts.quick ? [100] : [100, 1]) {
      cases.push({ id: `embedded, batch ${batch}`, label: 'embedded LMDB log', arg: { log: 'embedded', batch } })
      if (nats)
        cases.push({ id: `jetstream, batch ${batch}`, label: 'JetStream (nats-server 1 node, file store)', arg: { log: 'jetstream', nats: nats.url, batch } })
    }
    ctx.log(`event-log: UsageRecorded appends — ${cases.map((c) => c.id).join('; ')}`)
    const results = new Map<string, AppendResult[]>(cases.map((c) => [c.id, []]))
    for (let r = 0; r < ctx.opts.rounds; r++) {
      for (const c of r % 2 === 0 ? cases : [...cases].reverse()) {
        results.get(c.id)!.push(await runNodeJson<AppendResult>(SCRIPT, { ...c.arg, durationMs: ctx.opts.durationS * 1000 }))
      }
    }
    return cases.map((c) => {
      const rs = results.get(c.id)!
      return {
        scenario: 'event-log',
        target: c.id,
        label: c.label,
        rounds: [],
        rps: Math.round(median(rs.map((x) => x.eventsPerSec))),
        // Latency of one append (the whole batch, until acknowledged).
        p50Us: Math.round(median(rs.map((x) => x.appendP50Us))),
        p99Us: Math.round(median(rs.map((x) => x.appendP99Us))),
        cpuUsPerReq: Number.NaN,
        peakRssMiB: Number.NaN,
        errors: 0,
        note: 'events/s; latency of one append',
      }
    })
  } finally {
    await nats?.stop()
  }
}
