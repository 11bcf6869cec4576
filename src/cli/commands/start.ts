import { availableParallelism } from 'node:os'
import { parseCommandArgs, required } from '../args.js'
import { loadConfig } from '../../config/load.js'
import type { Config } from '../../config/types.js'
import { KeyCipher, secretFromEnv } from '../../keys/key-cipher.js'
import { startGateway } from '../../main/start-gateway.js'
import { makeLogger } from '../logger.js'
import { runUntilSignal, stopSignal } from '../run-until-signal.js'
import { Supervisor, type WorkerReady } from '../../workers/supervisor.js'
import { IpcFleetBus } from '../../fleet/ipc-bus.js'
import { fleetSubjectRoot } from '../../fleet/fleet-bus.js'
import { lockDataDir } from '../../main/data-dir-lock.js'
import { claimWorkerPorts } from '../../workers/port-claim.js'
import { holdReloadsWhileStarting, onReloadSignal } from '../reload-on-signal.js'

/**
 * `tollgate start --config FILE`: run the gateway until SIGINT or SIGTERM; SIGHUP reloads the
 * config file (see src/main/reload.ts). With `workers` > 1 this process supervises that many
 * gateway processes on the one port (src/workers/supervisor.ts), and passes a SIGHUP on to them;
 * each of them runs this command again, as worker TOLLGATE_WORKER.
 */
export async function startCommand(args: string[]): Promise<void> {
  const v = parseCommandArgs('start', args, { config: { type: 'string' } })
  const configPath = required('start', 'config', v.config)
  const config = loadConfig(configPath)
  // Refuse early, before anything connects: without the secret (or with one too short to be one),
  // keys could not be shown to their owners again.
  KeyCipher.fromSecret(secretFromEnv())
  const logger = makeLogger('stdout')
  // Before anything announces that it serves (see stopSignal).
  const stopping = stopSignal(logger)
  try {
    return await serve(configPath, config, logger, stopping)
  } catch (err) {
    exitSoonAfterFailedStart(stopping)
    throw err
  }
}

/**
 * How long a start that failed may take to end on its own once its error is printed: every part it
 * opened is closed by then, but a part that went on (a connection still being attempted) would
 * keep the process running, and a supervisor (systemd, podman) restarts only a process that exits.
 */
const FAILED_START_EXIT_MS = 3_000

/**
 * After a failed start: a stop signal exits at once (the listener installed for the graceful stop
 * would otherwise swallow it), and the process exits with its code after FAILED_START_EXIT_MS
 * whatever still runs. Neither timer nor listener keeps a process that ends on its own alive.
 */
function exitSoonAfterFailedStart(stopping: Promise<string>): void {
  const exit = () => process.exit(process.exitCode ?? 1)
  void stopping.then(exit)
  setTimeout(exit, FAILED_START_EXIT_MS).unref()
}

async function serve(configPath: string, config: Config, logger: ReturnType<typeof makeLogger>, stopping: Promise<string>): Promise<void> {
  const starting = holdReloadsWhileStarting(logger)
  const worker = process.env.TOLLGATE_WORKER
  if (worker !== undefined) return runWorker(configPath, config, Number(worker), logger, starting, stopping)
  const count = config.workers === 'auto' ? availableParallelism() : config.workers
  if (count === 1) {
    const gateway = await startGateway(config, { logger })
    starting()
    onReloadSignal(logger, configPath, (next) => gateway.reload(next))
    return runUntilSignal(logger, () => gateway.close(), config.shutdownMs, stopping)
  }
  if (config.listen.port === 0) {
    throw new Error('workers > 1 share one port: set listen.port to a fixed port (0 would give each worker a port of its own)')
  }
  // The workers share the folder and the port on purpose; nobody else may (they take neither themselves).
  await lockDataDir(config.dataDir, 'gateway', `a gateway supervising ${count} workers`)
  await claimWorkerPorts(config, count)
  const supervisor = new Supervisor({ count, args: [process.argv[1]!, 'start', '--config', configPath], logger, shutdownMs: config.shutdownMs })
  const ready = await supervisor.start()
  logger.info({ ...ready, workers: count }, 'all workers ready')
  starting()
  // Each worker checks and applies the file itself (and logs the outcome); the supervisor only passes the signal on.
  process.on('SIGHUP', () => logger.info({ workers: supervisor.reload() }, 'reload passed on to the workers'))
  // The workers' own drains run in parallel; the supervisor waits for the last.
  return runUntilSignal(logger, () => supervisor.stop(), config.shutdownMs + 5_000, stopping)
}

/** One worker: its own admin port (admin.listen.port + index), the fleet through the supervisor without NATS. */
async function runWorker(
  configPath: string,
  config: Config,
  index: number,
  logger: ReturnType<typeof makeLogger>,
  starting: () => void,
  stopping: Promise<string>,
): Promise<void> {
  const log = logger.child({ worker: index })
  const channel = config.events.nats === undefined ? new IpcFleetBus(fleetSubjectRoot(config)) : undefined
  const gateway = await startGateway(workerConfig(config, index), { logger: log, worker: { index, channel } })
  starting()
  // A reloaded file is seen as this worker sees its config, so that its admin port compares equal.
  onReloadSignal(log, configPath, (next) => gateway.reload(workerConfig(next, index)))
  process.send?.({ type: 'ready', http: gateway.http, ws: gateway.ws, admin: gateway.admin } satisfies WorkerReady)
  // The supervisor is gone (killed): stop as if told to, rather than serve unsupervised.
  process.once('disconnect', () => process.kill(process.pid, 'SIGTERM'))
  return runUntilSignal(log, () => gateway.close(), config.shutdownMs, stopping)
}

/**
 * A worker's config: the file's, with the worker's own admin port (admin.listen.port + index),
 * and usage projected by worker 0 alone: each worker has a store of its own, and each projecting
 * the usage of every worker (the whole machine's) would cost each core what one does. The others
 * ask worker 0 for the dashboard's usage view, through the supervisor or over NATS (docs/fleet.md,
 * "Where usage is projected").
 */
function workerConfig(config: Config, index: number): Config {
  const adminPort = config.admin.listen.port === 0 ? 0 : config.admin.listen.port + index
  return {
    ...config,
    admin: { ...config.admin, listen: { ...config.admin.listen, port: adminPort } },
    usage: { ...config.usage, project: config.usage.project && index === 0 },
  }
}
