import { join } from 'node:path'
import { parseCommandArgs, required } from '../args.js'
import { loadConfig } from '../../config/load.js'
import { openEventLog } from '../../events/open-log.js'
import { replay } from '../../projections/replay.js'

/**
 * `tollgate replay --config FILE`: rebuild the LMDB projections from the event log. Prints the
 * number of events applied and the state digest (equal digests: equal state). Stop the gateway
 * first, or it keeps serving from the state as it is rebuilt.
 */
export async function replayCommand(args: string[]): Promise<void> {
  const v = parseCommandArgs('replay', args, { config: { type: 'string' } })
  const config = loadConfig(required('replay', 'config', v.config))
  const log = await openEventLog(config.events, config.dataDir)
  try {
    const out = await replay(join(config.dataDir, 'state'), log)
    process.stdout.write(JSON.stringify({ events: out.events, digest: out.digest }) + '\n')
  } finally {
    await log.close()
  }
}
