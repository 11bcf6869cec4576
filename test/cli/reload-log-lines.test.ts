import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import pino from 'pino'
import { onReloadSignal } from '../../src/cli/reload-on-signal.js'
import { ReloadPartFailed } from '../../src/main/errors.js'
import type { ReloadOutcome } from '../../src/main/reload.js'

// What an operator reads in the log for each outcome of a reload: the line SIGHUP writes, a part
// that failed named with what was applied before it and what was left.

const dir = await mkdtemp(join(tmpdir(), 'tollgate-reload-log-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))
const configPath = join(dir, 'config.json')
await writeFile(
  configPath,
  JSON.stringify({
    listen: { host: '127.0.0.1', port: 8080 },
    networks: { 'eth-1': { chainId: 1, upstreams: [{ url: 'http://127.0.0.1:8545', kind: 'full' }] } },
  }),
)
const lines: Record<string, any>[] = []
const logger = pino(
  { level: 'info' },
  new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)))
      done()
    },
  }),
)
let outcome: ReloadOutcome = { applied: true, changes: {} }
onReloadSignal(logger, configPath, () => outcome)
t.teardown(() => process.removeAllListeners('SIGHUP'))
/** The line one SIGHUP writes (pino's stream writes as it logs). */
async function lineOf(o: ReloadOutcome): Promise<Record<string, any>> {
  outcome = o
  const from = lines.length
  process.emit('SIGHUP', 'SIGHUP')
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(lines.length, from + 1, 'one line per reload')
  return lines[from]!
}

t.test('a part that failed: named, at error level, with the parts applied and those left', async (t) => {
  const failed = new ReloadPartFailed('node heads', ['nodes', 'subscriptions', 'account pools'], ['retired nodes', 'plans'], new Error('poll refused'))
  const line = await lineOf({ applied: false, failed })
  t.equal(line.level, 50, 'an error')
  t.equal(line.reason, 'part-failed')
  t.equal(line.part, 'node heads')
  t.same(line.applied, ['nodes', 'subscriptions', 'account pools'])
  t.same(line.notApplied, ['retired nodes', 'plans'])
  t.equal(line.error, 'poll refused')
  t.match(line.msg, /^reload failed at node heads: poll refused; the parts before it hold, those after it were not applied/)
})

t.test('the other outcomes keep their lines', async (t) => {
  t.equal((await lineOf({ applied: true, changes: {} })).msg, 'config reloaded: nothing changed')
  t.equal((await lineOf({ applied: true, changes: { limits: ['limits.maxBatch'] } })).msg, 'config reloaded')
  const restart = await lineOf({ applied: false, restart: ['evm.workers'] })
  t.equal(restart.reason, 'restart')
  t.match(restart.msg, /evm\.workers cannot change while the gateway runs/)
  t.equal((await lineOf({ applied: false, error: new Error('no catalog') })).reason, 'error')
})
