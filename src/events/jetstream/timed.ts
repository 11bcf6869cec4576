import { EventLogUnavailable } from '../errors.js'

/**
 * `work`, or EventLogUnavailable once `ms` pass without it settling: a read of a stream whose
 * server stopped answering must fail, and the caller (the outbox, a projection) retry, rather
 * than wait for ever. The work itself is not stopped.
 */
export function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new EventLogUnavailable(`JetStream ${what} took longer than ${ms} ms`)), ms)
  })
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
}
