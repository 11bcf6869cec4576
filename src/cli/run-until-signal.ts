import type { Logger } from 'pino'

/** Wait for SIGINT/SIGTERM, then shut down gracefully (a second signal exits at once). */
export async function runUntilSignal(logger: Logger, shutdown: () => Promise<void>): Promise<void> {
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'))
    process.once('SIGTERM', () => resolve('SIGTERM'))
  })
  process.once('SIGINT', () => process.exit(130))
  process.once('SIGTERM', () => process.exit(143))
  logger.info({ signal }, 'shutting down')
  await shutdown()
  logger.info('stopped')
}
