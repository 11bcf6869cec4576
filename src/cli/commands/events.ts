import { parseCommandArgs, required } from '../args.js'
import { UsageError } from '../errors.js'
import { loadConfig } from '../../config/load.js'
import { openEventLog } from '../../events/open-log.js'

/**
 * `tollgate events --config FILE [--follow] [--from SEQ]`: the event log as JSON lines, each the
 * event with its `seq` (and `type`, `time`, `id`, `version` and payload). Keys never appear: events
 * carry only key ids, hashes and ciphers.
 */
export async function eventsCommand(args: string[]): Promise<void> {
  const v = parseCommandArgs('events', args, {
    config: { type: 'string' },
    follow: { type: 'boolean' },
    from: { type: 'string' },
  })
  const config = loadConfig(required('events', 'config', v.config))
  const from = v.from === undefined ? 1 : Number(v.from)
  if (!Number.isInteger(from) || from < 1) throw new UsageError(`tollgate events: --from must be a sequence number >= 1, got ${JSON.stringify(v.from)}`)
  const log = await openEventLog(config.events, config.dataDir)
  const write = (line: string): Promise<void> => new Promise((resolve) => (process.stdout.write(line) ? resolve() : process.stdout.once('drain', resolve)))
  try {
    if (!v.follow) {
      let next = from
      for (;;) {
        const batch = await log.read(next, 1000)
        if (batch.length === 0) break
        await write(batch.map((s) => JSON.stringify({ seq: s.seq, ...s.event }) + '\n').join(''))
        next = batch[batch.length - 1].seq + 1
      }
      return
    }
    const follower = log.follow(from, async (batch) => {
      await write(batch.map((s) => JSON.stringify({ seq: s.seq, ...s.event }) + '\n').join(''))
    })
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve)
      process.once('SIGTERM', resolve)
    })
    await follower.stop()
  } finally {
    await log.close()
  }
}
