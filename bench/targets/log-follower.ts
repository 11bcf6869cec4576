import { createInterface } from 'node:readline'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

/**
 * What an instance that serves none of the calls does with the fleet's events: its projector follows
 * the JetStream log into a state store of its own. Imported from the tree named in the argument (so
 * that two builds follow one stream side by side, bench/follow-cost.ts). Prints `{"ready":true}`
 * once caught up; answers `applied` on stdin with `{"applied":N,"writes":W}` (events in its store's checkpoint, transactions committed).
 * Argument (JSON): { root, servers, stream, subjectPrefix, dir, usageCommitMs? }.
 */
const { root, servers, stream, subjectPrefix, dir, usageCommitMs } = JSON.parse(process.argv[2]!) as Record<string, string>
const from = (file: string) => import(pathToFileURL(join(root, file)).href)
const { JetStreamLog } = await from('src/events/jetstream-log.ts')
const { StateStore } = await from('src/store/state-store.ts')
const { Projector } = await from('src/projections/projector.ts')

const log = await JetStreamLog.connect({ servers, stream, subjectPrefix, replicas: 1, name: `follower ${root}` })
const store = StateStore.open(dir)
// Transactions committed: what each costs (the commit, and LMDB's sync of it in a thread of its own) is paid per batch.
let writes = 0
const write = store.write.bind(store)
store.write = (fn: unknown) => {
  writes++
  return write(fn)
}
const projector = new Projector(store, log, {
  ...(usageCommitMs === undefined ? {} : { usageCommitMs: Number(usageCommitMs) }),
  onError: (err: Error) => process.stderr.write(`${err.message}\n`),
})
await projector.catchUp()
projector.start()
process.stdout.write(`${JSON.stringify({ ready: true })}\n`)

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'applied') process.stdout.write(`${JSON.stringify({ applied: projector.applied(), writes })}\n`)
})
process.once('SIGTERM', async () => {
  await projector.stop()
  await log.close()
  store.close()
  process.exit(0)
})
