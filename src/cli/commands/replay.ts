import { join } from 'node:path'
import { parseCommandArgs, required } from '../args.js'
import { ReplayInterrupted, UsageError } from '../errors.js'
import { loadConfig } from '../../config/load.js'
import { startReaderThread } from '../../events/open-log.js'
import type { Progress } from '../progress.js'

/**
 * `tollgate replay --config FILE [--restart] [--batch N]`: rebuild the LMDB projections from the
 * event log, at the speed of reading it (one reader per stream: the log, and with events.partitions
 * each usage partition, read in parallel; transactions of thousands of events). Prints
 * the number of events applied and the state digest (equal digests: equal state). Progress goes to
 * stderr: a live line on a terminal, a log line every few seconds otherwise. Ctrl-C (or SIGTERM)
 * stops after the transaction in progress, exit code 130; a replay that was stopped or killed goes
 * on from its checkpoint when run again (--restart: start over). A data folder a live gateway
 * holds is refused (the gateway would serve from the state as it is rebuilt), and a gateway does
 * not start on the folder while a replay runs.
 */
export async function replayCommand(args: string[]): Promise<void> {
  const v = parseCommandArgs('replay', args, { config: { type: 'string' }, restart: { type: 'boolean' }, batch: { type: 'string' } })
  const config = loadConfig(required('replay', 'config', v.config))
  const batch = v.batch === undefined ? undefined : Number(v.batch)
  if (batch !== undefined && (!Number.isInteger(batch) || batch < 1))
    throw new UsageError(`tollgate replay: --batch must be a whole number of events >= 1, got ${JSON.stringify(v.batch)}`)
  // The thread that reads the stream starts now: it loads its NATS client and connects while
  // this thread loads the projections, takes the folder and opens the store (0.6-1.2 s of a
  // replay of 100,000 events, when it started after them). It stops by itself if it is not used.
  const readerThread = startReaderThread(config.events)
  const [{ openEventLog }, { replay }, { makeLogger }, { Progress }, { lockDataDir }] = await Promise.all([
    import('../../events/open-log.js'),
    import('../../projections/replay.js'),
    import('../logger.js'),
    import('../progress.js'),
    import('../../main/data-dir-lock.js'),
  ])
  const logger = makeLogger('stderr')
  let lock: Awaited<ReturnType<typeof lockDataDir>>
  let log: Awaited<ReturnType<typeof openEventLog>>
  try {
    lock = await lockDataDir(config.dataDir, 'replay', 'tollgate replay')
    log = await openEventLog(config.events, config.dataDir, { readerThread })
  } catch (err) {
    readerThread?.stop()
    throw err
  }
  const at = log.partitions.length > 0 ? 'event' : 'seq'
  const stop = new AbortController()
  const interrupt = (signal: NodeJS.Signals): void => stop.abort(new ReplayInterrupted(`stopped by ${signal}`))
  process.once('SIGINT', interrupt)
  process.once('SIGTERM', interrupt)
  let progress: Progress | undefined
  let done = 0
  try {
    const out = await replay(join(config.dataDir, 'state'), log, {
      batch,
      restart: v.restart,
      usage: config.usage.project,
      signal: stop.signal,
      onStart(from, total) {
        done = from - 1
        // With usage partitions, positions are counts of events over the streams, not one stream's seqs.
        if (from > 1) logger.info({ from, total }, `resuming the replay that was interrupted: from ${at} ${from} of ${total} (--restart starts over)`)
        progress = new Progress({ task: 'replay', unit: 'events', total, start: done, terminal: process.stderr.isTTY ? process.stderr : undefined, logger })
      },
      onProgress(seq, total) {
        done = seq
        // Each commit is a point a stopped replay goes on from (LOG_LEVEL=debug to see them).
        logger.debug({ checkpoint: seq, total }, 'replay: transaction committed')
        progress?.update(seq)
      },
    })
    progress?.finish()
    process.stdout.write(JSON.stringify({ events: out.events, digest: out.digest }) + '\n')
  } catch (err) {
    if (!(err instanceof ReplayInterrupted)) throw err
    progress?.finish()
    process.stderr.write(`tollgate replay: ${err.message} at ${at} ${done}; run it again to go on from there\n`)
    process.exitCode = 130
  } finally {
    process.off('SIGINT', interrupt)
    process.off('SIGTERM', interrupt)
    await log.close()
    await lock.release()
  }
}
