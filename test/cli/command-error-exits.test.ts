import t from 'tap'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startNats } from '../../harness/nats-server.js'
import { runCli } from '../helpers/cli.js'
import { TEST_SECRET } from '../helpers/gateway.js'

// A command that fails once it has connected to NATS exits non-zero with its message: an open
// connection left behind keeps the process alive, and a script that runs it waits forever. The
// failure here is a store built from another stream (ProjectionAheadOfLog, found when the command
// catches up), which every command that reads the projections meets before it does anything.
t.setTimeout(240_000)
/** A command that has not exited by then hangs: one takes a few seconds here even under load. */
const RUN_MS = 60_000
const env = { TOLLGATE_SECRET: TEST_SECRET }
const nats = await startNats()
t.teardown(() => nats.stop())
const dataDir = await mkdtemp(join(tmpdir(), 'tollgate-error-exits-'))
t.teardown(() => rm(dataDir, { recursive: true, force: true }))

/** A config of `dataDir` on a stream of its own (subjects of its own: streams may not share them). */
async function configOnStream(name: string): Promise<string> {
  const path = join(dataDir, `${name}.json`)
  const networks = { 'eth-1': { chainId: 31337, upstreams: [{ url: 'http://127.0.0.1:1', kind: 'full' }] } }
  await writeFile(path, JSON.stringify({ dataDir, events: { nats: nats.url, stream: `E${randomBytes(4).toString('hex')}`, subjectPrefix: name }, networks }))
  return path
}

const first = await configOnStream('first')
const wallet = `0x${'2'.repeat(40)}`
const created = await runCli(['accounts', 'create', '--config', first, '--wallet', wallet, '--plan', 'tier-3'], env, RUN_MS)
// The same folder, whose store has applied the first stream's events, on a new stream.
const other = await configOnStream('other')

const commands = [
  ['accounts', 'create', '--config', other, '--wallet', `0x${'3'.repeat(40)}`, '--plan', 'tier-3'],
  ['keys', 'regenerate', '--config', other, '--account', String(created.last?.accountId)],
  ['usage', '--config', other, '--json'],
]
for (const args of commands) {
  t.test(`${args.slice(0, 2).join(' ')} on a store ahead of its stream exits 1 with the reason`, async (t) => {
    t.equal(created.code, 0, `the account of the first stream was made: ${created.stderr}`)
    const out = await runCli(args, env, RUN_MS).catch((err: Error) => err)
    if (out instanceof Error) return t.fail(`it did not exit: ${out.message}`)
    t.equal(out.code, 1)
    t.match(out.stderr, /ProjectionAheadOfLog: .*ends at seq 0.*tollgate replay/)
  })
}
