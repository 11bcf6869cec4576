/** A command-line mistake: printed with the usage line, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError'
}

/** A replay stopped by SIGINT or SIGTERM after its last committed transaction. */
export class ReplayInterrupted extends Error {
  override name = 'ReplayInterrupted'
}
