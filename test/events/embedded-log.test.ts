import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { EmbeddedLog } from '../../src/events/embedded-log.js'
import type { EventLog } from '../../src/events/log.js'
import { EventLogUnavailable } from '../../src/events/errors.js'
import { runEventLogSuite, usageEvents, waitFor } from './log-suite.js'
import type { StoredEvent } from '../../src/events/types.js'
import { childScript } from '../helpers/built.js'

async function openTemp(): Promise<{ dir: string; path: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-embedded-'))
  return { dir, path: join(dir, 'log') }
}

runEventLogSuite(t, 'embedded', async () => {
  const { dir, path } = await openTemp()
  const opened: EventLog[] = [EmbeddedLog.open(path)]
  return {
    log: opened[0],
    async another() {
      const log = EmbeddedLog.open(path)
      opened.push(log)
      return log
    },
    async cleanup() {
      for (const log of opened.reverse()) await log.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
})

t.test('embedded: appends by another process are followed and take distinct seqs', async (t) => {
  const { dir, path } = await openTemp()
  const log = EmbeddedLog.open(path)
  t.teardown(async () => {
    await log.close()
    await rm(dir, { recursive: true, force: true })
  })
  const got: StoredEvent[] = []
  const follower = log.follow(1, async (batch) => {
    got.push(...batch)
  })
  t.teardown(() => follower.stop())
  // Both processes append 200 events one by one at the same time: LMDB's cross-process write
  // lock must keep seqs unique and gap-free.
  const script = join(import.meta.dirname, 'fixtures', 'append-child.ts')
  const child = spawn(process.execPath, [...(await childScript(script)), path, '200'], { stdio: ['ignore', 'pipe', 'inherit'] })
  let childOpen = false
  let childCode: number | null | undefined
  child.stdout.on('data', (chunk: Buffer) => (childOpen ||= chunk.toString().includes('open')))
  child.once('exit', (code) => (childCode = code))
  // Generous bounds: a process's start-up on 2 busy shared cores can take seconds.
  await waitFor(() => childOpen || childCode !== undefined, 'the child process to open the log', 30_000)
  const parentCount = 200
  for (const event of usageEvents(parentCount, 10_000, 'parent')) await log.append([event])
  await waitFor(() => childCode !== undefined, 'the child process to exit', 30_000)
  t.equal(childCode, 0, 'the child process appended without error')
  const total = 200 + parentCount
  await waitFor(() => got.length >= total, 'the events of both processes', 30_000)
  await follower.stop()
  t.same(
    got.map((s) => s.seq),
    Array.from({ length: total }, (_, i) => i + 1),
  )
  const owners = got.map((s) => (s.event.type === 'UsageRecorded' ? s.event.instance : ''))
  t.comment(`writer switches along the log: ${owners.filter((o, i) => i > 0 && o !== owners[i - 1]).length}`)
  t.equal(got.filter((s) => s.event.type === 'UsageRecorded' && s.event.instance === 'child').length, 200)
  t.equal(new Set(got.map((s) => s.event.id)).size, total, 'every event once')
})

t.test('embedded: a closed log refuses with EventLogUnavailable', async (t) => {
  const { dir, path } = await openTemp()
  const log = EmbeddedLog.open(path)
  await log.close()
  await t.rejects(log.append(usageEvents(1)), EventLogUnavailable)
  await rm(dir, { recursive: true, force: true })
})
