/**
 * The one way the tests wait for something to happen: poll `check` until it holds, with a bound.
 * A bounded wait on a real event, never a timing assertion: on a slow machine it waits longer,
 * and a check that never holds fails the test at the bound.
 */

/** Poll `check` every `everyMs` until it holds or `withinMs` passes; the ms it took, or undefined. */
export async function within(withinMs: number, check: () => Promise<boolean> | boolean, everyMs = 25): Promise<number | undefined> {
  const start = Date.now()
  for (;;) {
    if (await check()) return Date.now() - start
    if (Date.now() - start > withinMs) return undefined
    await new Promise((r) => setTimeout(r, everyMs))
  }
}

/** Whether `check` came to hold within `withinMs` (10 s by default). */
export async function until(check: () => Promise<boolean> | boolean, withinMs = 10_000): Promise<boolean> {
  return (await within(withinMs, check)) !== undefined
}

/** Resolve once `check` holds; reject naming `what` after `withinMs`. */
export async function waitFor(check: () => Promise<boolean> | boolean, what: string, withinMs = 10_000): Promise<void> {
  if ((await within(withinMs, check, 10)) === undefined) throw new Error(`timed out after ${withinMs} ms waiting for ${what}`)
}
