/**
 * A part of a reload threw: the parts before it were applied and hold, the part named and those
 * after it were not (or not wholly) applied. The gateway serves on with that mix until a reload
 * that passes, or a restart; `tollgate reload` and SIGHUP log it as `reload failed at <part>`.
 */
export class ReloadPartFailed extends Error {
  override name = 'ReloadPartFailed'
  constructor(
    /** The part whose apply threw (reloadParts' names: `nodes`, `node heads`, `plans`, …). */
    readonly part: string,
    /** The parts applied before it, in order. */
    readonly applied: readonly string[],
    /** The parts after it, not applied. */
    readonly notApplied: readonly string[],
    cause: unknown,
  ) {
    super(`the reload's ${part} part failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
  }
}

/** The lock file's lock could not be tried at all (no flock(1), or it failed): say so, never guess. */
export class FileLockUnavailable extends Error {
  override name = 'FileLockUnavailable'
}

/**
 * The lock file, or the process it names, is not what a gateway makes: another user's file, one
 * others may write, a symbolic link, a pid that does not hold it. Nothing is taken over or signalled.
 */
export class UntrustedLockFileError extends Error {
  override name = 'UntrustedLockFileError'
}

/** The data folder is held by another live process (a gateway, a supervisor, a replay). */
export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError'
}
