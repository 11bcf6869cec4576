/**
 * The event log alone: UsageRecorded events per second appended to the embedded LMDB log or to
 * JetStream, in batches as the outbox sends them (it appends up to 500 at a time) and one by one
 * (each append waits for its acknowledgement). Events are made with makeEvent, so the
 * deterministic id (a SHA-256) is part of the cost, as in the gateway.
 *
 * Run as its own process: `node --import tsx bench/scenarios/event-log-append.ts '<json>'`; prints
 * `{"events":N,"eventsPerSec":R,"appendP50Us":…,"appendP99Us":…}`.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { EmbeddedLog } from '../../src/events/embedded-log.js'
import { JetStreamLog } from '../../src/events/jetstream-log.js'
import type { EventLog } from '../../src/events/log.js'
import { makeEvent } from '../../src/events/make-event.js'
import type { TollgateEvent } from '../../src/events/types.js'

export interface EventLogBenchOptions {
  log: 'embedded' | 'jetstream'
  nats?: string
  batch: number
  durationMs: number
  /** A JetStream stream tag shared with other producers (several instances appending to one stream); default one of its own. */
  shared?: string
  /** Accounts the events are spread over (the account is a subject token; default 1). */
  accounts?: number
}

const opts = JSON.parse(process.argv[2] ?? '{}') as EventLogBenchOptions
const dir = await mkdtemp(join(tmpdir(), 'tollgate-bench-log-'))
const log: EventLog =
  opts.log === 'embedded'
    ? EmbeddedLog.open(join(dir, 'log'))
    : await (() => {
        // A stream and subjects of its own per run: streams of one server must not overlap.
        const tag = opts.shared ?? randomBytes(4).toString('hex')
        return JetStreamLog.connect({ servers: opts.nats!, stream: `BENCH${tag}`, subjectPrefix: `bench${tag}`, replicas: 1, name: 'bench' })
      })()

let interval = 0
const keyId = `key_${randomBytes(8).toString('hex')}`
function nextBatch(n: number): TollgateEvent[] {
  const out: TollgateEvent[] = []
  for (let i = 0; i < n; i++) {
    interval += 1000
    out.push(
      makeEvent(
        {
          type: 'UsageRecorded',
          accountId: `acc_bench${(interval / 1000) % (opts.accounts ?? 1)}`,
          keyId,
          network: 'eth-1',
          kind: 'full',
          instance: 'bench',
          intervalStart: interval,
          intervalMs: 1000,
          requests: 1234,
          errors: 1,
          bytesIn: 80_000,
          bytesOut: 120_000,
        },
        Date.now(),
      ),
    )
  }
  return out
}

// Warm up (stream creation, LMDB map growth, JIT) before the clock starts.
for (let i = 0; i < 20; i++) await log.append(nextBatch(opts.batch))
const appendUs: number[] = []
let events = 0
const t0 = performance.now()
while (performance.now() - t0 < opts.durationMs) {
  const batch = nextBatch(opts.batch)
  const a = performance.now()
  await log.append(batch)
  appendUs.push((performance.now() - a) * 1000)
  events += batch.length
}
const elapsed = performance.now() - t0
appendUs.sort((a, b) => a - b)
const pct = (p: number): number => Math.round(appendUs[Math.min(appendUs.length - 1, Math.floor((p / 100) * appendUs.length))] ?? 0)
process.stdout.write(JSON.stringify({ events, eventsPerSec: Math.round((events * 1000) / elapsed), appendP50Us: pct(50), appendP99Us: pct(99) }) + '\n')
await log.close()
await rm(dir, { recursive: true, force: true })
process.exit(0)
