import { join } from 'node:path'
// @ts-expect-error: a plain JavaScript script without type declarations
import { OUT, buildForTests, isFresh } from '../../scripts/build-for-tests.mjs'

let checked: Promise<string> | undefined

/**
 * The command line as JavaScript (dist-test/src/cli/main.js), for the processes tests start: it
 * loads in a third of the CPU that tsx takes (scripts/build-for-tests.mjs). tap builds it before
 * the suite; a test run on its own builds it here when a source is newer than the build, so a
 * process never runs code older than the test.
 */
export function builtMain(): Promise<string> {
  checked ??= (async () => {
    if (!(isFresh() as boolean)) await buildForTests()
    return join(OUT as string, 'src', 'cli', 'main.js')
  })()
  return checked
}
