import t from 'tap'
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { connect } from '@nats-io/transport-node'
import { jetstream } from '@nats-io/jetstream'
import { encodeEvent } from '../../src/events/codec.js'
import { JetStreamLog } from '../../src/events/jetstream-log.js'
import { subjectOf, type KeyRevoked, type TollgateEvent } from '../../src/events/types.js'
import { StateStore } from '../../src/store/state-store.js'
import { startNats } from '../../harness/nats-server.js'
import { accountWithKey, ev, rateLimitedEvent, T0, tempDir, usageEvent } from '../projections/fixtures.js'
import { usageTotals } from '../../src/usage/usage-queries.js'
import { builtMain } from '../helpers/built.js'

// `tollgate replay` stopped mid-way, by Ctrl-C (SIGINT) or by SIGKILL, and started again, ends with
// the digest of a replay that ran through: against a real nats-server, the CLI in its own process.
t.setTimeout(90_000)
const MAIN = await builtMain()
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** Events per transaction: small, so that the stream makes dozens of checkpoints. */
const BATCH = 1_000

const nats = await startNats()
t.teardown(() => nats.stop())
const dir = tempDir(t, 'replay-interrupted')

/**
 * 40 accounts, usage from two instances, rate limits, key regenerations: about 24,500 events, so
 * that a replay from the start reads the stream in a worker thread (from 20,000 events on), as a
 * long one does, and a resumed one on its own thread.
 */
function history(): TollgateEvent[] {
  const events: TollgateEvent[] = []
  const accounts = Array.from({ length: 40 }, (_, n) => ({ accountId: `acc_${n}`, ...accountWithKey(`acc_${n}`, '0x' + String(n).padStart(40, '0'), T0 + n) }))
  for (const a of accounts) events.push(...a.events)
  for (let i = 0; i < 300; i++) {
    for (const [n, a] of accounts.entries()) {
      for (const instance of ['gw-a', 'gw-b']) {
        events.push(
          usageEvent({
            accountId: a.accountId,
            keyId: a.key.keyId,
            instance,
            intervalStart: T0 + i * 10_000,
            requests: 1 + ((i * n) % 97),
            errors: i % 3,
            bytesIn: 80 * i,
            bytesOut: 9_000 + n,
          }),
        )
      }
      if ((i + n) % 25 === 0) events.push(rateLimitedEvent(a.accountId, a.key.keyId, T0 + i * 10_000, 1 + n))
    }
    if (i % 20 === 10) {
      const a = accounts[i % accounts.length]!
      events.push(
        ev<KeyRevoked>(
          { type: 'KeyRevoked', accountId: a.accountId, keyId: a.key.keyId, reason: 'regenerated', effectiveAt: T0 + i * 10_000 },
          T0 + i * 10_000,
        ),
      )
    }
  }
  return events
}

const events = history()
// Appended in four parts; after each, facts of before sent again at new seqs (no msgID), as an
// outbox re-sending after JetStream's duplicate window stores them: one from just before (its id
// still in the window), one from far back (a producer's watermark catches it). Some fall before
// the point where a replay below is stopped, some after. Counted once all the same.
const log = await JetStreamLog.connect({ servers: nats.url, stream: 'TOLLGATE', subjectPrefix: 'tollgate', replicas: 1 })
const nc = await connect({ servers: nats.url })
const js = jetstream(nc)
const usageBefore = (i: number): TollgateEvent => {
  while (events[--i]!.type !== 'UsageRecorded');
  return events[i]!
}
let resent = 0
for (const [from, to] of [
  [0, 3_000],
  [3_000, 8_000],
  [8_000, 16_000],
  [16_000, events.length],
] as const) {
  await log.append(events.slice(from, to))
  for (const copy of [usageBefore(to - 30), usageBefore(to - 700)]) {
    await js.publish(subjectOf(copy), encodeEvent(copy))
    resent++
  }
}
await log.close()
await nc.close()
const total = events.length + resent

/** A config whose state store is its own folder, on the test's stream. */
function config(name: string): { path: string; state: string } {
  const dataDir = join(dir, name)
  const path = join(dir, `${name}.json`)
  writeFileSync(
    path,
    JSON.stringify({ dataDir, events: { nats: nats.url }, networks: { 'eth-1': { chainId: 1, upstreams: [{ url: 'http://127.0.0.1:9', kind: 'full' }] } } }),
  )
  return { path, state: join(dataDir, 'state') }
}

interface Ended {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/**
 * `tollgate replay --config FILE --batch BATCH` in its own process, logging each committed
 * transaction (LOG_LEVEL=debug). With `stopAt`: once a transaction past that seq is committed,
 * the process is sent `signal`, by its own PID.
 */
function replay(configPath: string, stop?: { signal: NodeJS.Signals; after: number }): Promise<Ended> {
  const child = spawn(process.execPath, [MAIN, 'replay', '--config', configPath, '--batch', String(BATCH)], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'debug' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  let sent = false
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  createInterface({ input: child.stderr }).on('line', (line) => {
    stderr += line + '\n'
    if (stop === undefined || sent) return
    const checkpoint = (JSON.parse(line.startsWith('{') ? line : 'null') as { checkpoint?: number } | null)?.checkpoint
    if (checkpoint !== undefined && checkpoint >= stop.after) {
      sent = true
      process.kill(child.pid!, stop.signal)
    }
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`tollgate replay did not end in 60 s; stderr: ${stderr.slice(-2000)}`))
    }, 60_000)
    child.once('error', reject)
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

/** The JSON answer a replay printed last. */
function answer(run: Ended): { events: number; digest: string } {
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { events: number; digest: string }
}

/** Where a stopped replay left its store: the checkpoint, and whether it is marked as being replayed. */
async function leftAt(state: string): Promise<{ checkpoint: number; replaying: boolean }> {
  const store = StateStore.open(state)
  try {
    return { checkpoint: store.checkpoint(), replaying: store.replaying() }
  } finally {
    await store.close()
  }
}

const through = config('through')
const ran = await replay(through.path)
const expected = answer(ran)

t.test('a replay that runs through applies the whole stream, duplicates counted once', async (t) => {
  t.equal(ran.code, 0, 'exit code 0', { stderr: ran.stderr })
  t.equal(expected.events, total)
  t.match(expected.digest, /^[0-9a-f]{64}$/)
  const store = StateStore.open(through.state)
  t.teardown(() => store.close())
  const sums = events.reduce((sum, e) => (e.type === 'UsageRecorded' ? sum + e.requests : sum), 0)
  t.equal(usageTotals(store).requests, sums, 'each re-sent fact counted once')
  t.notOk(store.replaying(), 'the store is no longer marked as being replayed')
})

for (const signal of ['SIGINT', 'SIGKILL'] as const) {
  t.test(`stopped by ${signal} mid-way, started again: the same digest as one that ran through`, async (t) => {
    const stopped = config(`stopped-${signal}`)
    const first = await replay(stopped.path, { signal, after: 5 * BATCH })
    if (signal === 'SIGINT') {
      t.equal(first.code, 130, 'Ctrl-C: exit code 130')
      t.match(first.stderr, /tollgate replay: stopped by SIGINT at seq \d+; run it again to go on from there/)
    } else {
      t.equal(first.signal, 'SIGKILL', 'killed')
    }
    t.equal(first.stdout, '', 'no answer from a replay that did not end')
    const left = await leftAt(stopped.state)
    t.ok(left.checkpoint >= 5 * BATCH && left.checkpoint < total, `stopped mid-way (checkpoint ${left.checkpoint} of ${total})`)
    t.ok(left.replaying, 'the store stays marked as being replayed')

    const second = await replay(stopped.path)
    t.equal(second.code, 0, 'exit code 0', { stderr: second.stderr })
    t.ok(second.stderr.includes(`resuming the replay that was interrupted: from seq ${left.checkpoint + 1} of ${total}`), 'goes on from the checkpoint')
    t.same(answer(second), expected, 'the digest of the replay that ran through')
  })
}
