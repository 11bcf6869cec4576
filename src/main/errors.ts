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
