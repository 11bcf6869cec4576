/** A heavy call refused because its key already had its heavy calls at once running, and none finished in time. */
export class HeavyCallsBusy extends Error {
  override name = 'HeavyCallsBusy'
  constructor(
    /** How many heavy calls the key may have running at once. */
    readonly max: number,
    /** How long the call waited for one of them to finish. */
    readonly waitedMs: number,
  ) {
    super(`${max} heavy calls of this key were running and none finished within ${waitedMs} ms`)
  }
}
