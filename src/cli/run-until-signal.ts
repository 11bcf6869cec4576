import type { Logger } from 'pino'

/** Time given to the graceful stop beyond `shutdownMs` (closing the stores) before a forced exit. */
const CLOSE_GRACE_MS = 5_000

/**
 * Wait for SIGINT/SIGTERM, shut down gracefully, and exit. A second signal exits at once; a stop
 * that takes longer than `shutdownMs` plus a grace exits with code 1, so a deploy never waits on
 * a process that does not end.
 */
export async function runUntilSignal(logger: Logger, shutdown: () => Promise<void>, shutdownMs: number): Promise<never> {
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'))
    process.once('SIGTERM', () => resolve('SIGTERM'))
  })
  process.once('SIGINT', () => process.exit(130))
  process.once('SIGTERM', () => process.exit(143))
  logger.info({ signal }, 'shutting down')
  setTimeout(() => {
    logger.error({ shutdownMs, graceMs: CLOSE_GRACE_MS }, 'the graceful stop did not end in time: exiting')
    process.exit(1)
  }, shutdownMs + CLOSE_GRACE_MS).unref()
  try {
    await shutdown()
  } catch (err) {
    logger.error({ err }, 'the graceful stop failed')
    process.exit(1)
  }
  logger.info('stopped')
  // Every socket and store is closed; exiting now does not wait for a timer someone forgot.
  process.exit(0)
}
