import type { Logger } from 'pino'

/** Time given to the graceful stop beyond `shutdownMs` (closing the stores) before a forced exit. */
const CLOSE_GRACE_MS = 5_000

/**
 * The first SIGINT or SIGTERM from now on; a second one exits at once (130 or 143).
 *
 * Listened for from the start of a command, before it announces that it serves: a process with no
 * listener for a signal is killed by it outright. A process manager (or a test) that sends SIGTERM
 * as soon as it reads "ready" then caught the gateway between that line and the listener, and it
 * died without its graceful stop (seen: a restarted gateway, 1 of 3 runs). A signal during the start
 * stops the gateway as soon as it has started; a second one exits at once.
 */
export function stopSignal(logger: Logger): Promise<string> {
  return new Promise((resolve) => {
    let first: string | undefined
    const on = (signal: string, code: number) => () => {
      if (first !== undefined) process.exit(code)
      first = signal
      // Still listened for, so that a second one is an exit, not a kill.
      process.once(signal, () => process.exit(code))
      logger.debug({ signal }, 'stop signal received')
      resolve(signal)
    }
    const onInt = on('SIGINT', 130)
    const onTerm = on('SIGTERM', 143)
    process.once('SIGINT', onInt)
    process.once('SIGTERM', onTerm)
  })
}

/**
 * Wait for SIGINT/SIGTERM (`stopping`, from `stopSignal` called when the command began), shut down
 * gracefully, and exit. A second signal exits at once; a stop that takes longer than `shutdownMs`
 * plus a grace exits with code 1, so a deploy never waits on a process that does not end.
 */
export async function runUntilSignal(logger: Logger, shutdown: () => Promise<void>, shutdownMs: number, stopping = stopSignal(logger)): Promise<never> {
  const signal = await stopping
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
