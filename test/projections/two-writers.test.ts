import t from 'tap'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { unpack } from 'msgpackr'
import { EmbeddedLog } from '../../src/events/embedded-log.js'
import { decodeEvent } from '../../src/events/codec.js'
import { StateStore } from '../../src/store/state-store.js'
import { tempDir, usageEvent, T0 } from './fixtures.js'
import { readModelDigest } from './fixtures-v1/read-model-digest.js'
import { childScript } from '../helpers/built.js'

// Two processes applying the same log into the same LMDB state folder at the same time (a
// gateway and a command line on one data folder) leave it exactly as one process does: each
// transaction tests the checkpoint it moves, so a batch the other process applied is skipped.
// Small, different batch sizes make their transactions interleave.

const CHILD = await childScript(fileURLToPath(new URL('./fixtures/project-child.ts', import.meta.url)))
const records = unpack(readFileSync(new URL('./fixtures-v1/log-v1.msgpack', import.meta.url))) as Array<[string, Uint8Array]>

function project(logPath: string, statePath: string, batch: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...CHILD, logPath, statePath, String(batch)], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.once('exit', (code) => resolve({ code, out }))
  })
}

t.test('two writers of one state folder build what one builds', async (t) => {
  const dir = tempDir(t, 'two-writers')
  const logPath = join(dir, 'log')
  const log = EmbeddedLog.open(logPath)
  const accounts = records.map(([, bytes]) => decodeEvent(bytes))
  const withKey = accounts.find((e) => e.type === 'KeyIssued') as { accountId: string; keyId: string }
  const usage = Array.from({ length: 3_000 }, (_, i) =>
    usageEvent({ accountId: withKey.accountId, keyId: withKey.keyId, intervalStart: T0 + i * 1_000, requests: 1 + (i % 7), instance: `i${i % 3}` }),
  )
  await log.append([...accounts, ...usage])
  const total = await log.lastSeq()
  await log.close()

  const alone = join(dir, 'alone')
  const single = await project(logPath, alone, 50)
  t.equal(single.code, 0, single.out)
  const both = join(dir, 'both')
  const [a, b] = await Promise.all([project(logPath, both, 7), project(logPath, both, 13)])
  t.equal(a.code, 0, a.out)
  t.equal(b.code, 0, b.out)

  const one = StateStore.open(alone)
  const two = StateStore.open(both)
  t.teardown(() => {
    one.close()
    two.close()
  })
  t.equal(two.checkpoint(), total, `both caught up to the log's ${total} events`)
  t.equal(readModelDigest(two), readModelDigest(one), 'the read models are the same as one writer built')
  // The digest covers usage: the 3,000 usage events are in what it hashes.
  t.ok(
    [...one.entries()].some((e) => e.db === 'usageHourly'),
    'the usage read model is not empty',
  )
})
