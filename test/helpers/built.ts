import { join } from 'node:path'

/** The build script (plain JavaScript, found beside the sources wherever this file runs from). */
type BuildScript = {
  OUT: string
  buildForTests(): Promise<unknown>
  isFresh(): boolean
  builtPath(source: string): string
}
const buildScript = (): Promise<BuildScript> => import(new URL('../../scripts/build-for-tests.mjs', import.meta.url).href) as Promise<BuildScript>

/**
 * Whether this test process runs the suite's build (dist-test/, made by `npm test` before any file
 * starts), not a .ts file through tsx (`npx tap test/x.test.ts`).
 */
export const RUNS_BUILT = process.argv[1]?.endsWith('.js') === true

let checked: Promise<BuildScript> | undefined

/**
 * The build, as fresh as the sources: a built run uses it as it is (the runner built it, and
 * rebuilding would pull files from under the other test processes); a .ts file run on its own
 * builds it here when a source is newer, so a process never runs code older than its test.
 */
function fresh(): Promise<BuildScript> {
  checked ??= (async () => {
    const script = await buildScript()
    if (!RUNS_BUILT && !script.isFresh()) await script.buildForTests()
    return script
  })()
  return checked
}

/**
 * The command line as JavaScript (dist-test/src/cli/main.js), for the processes tests start: it
 * loads in a third of the CPU that tsx takes (scripts/build-for-tests.mjs).
 */
export async function builtMain(): Promise<string> {
  return join((await fresh()).OUT, 'src', 'cli', 'main.js')
}

/**
 * How to run a script of the tests' own as a child process (`node ...args`): its built .js, or,
 * when this test runs from its .ts file, the .ts through tsx.
 * @example spawn(process.execPath, [...(await childScript(join(import.meta.dirname, 'fixtures', 'append-child.ts'))), path])
 */
export async function childScript(source: string): Promise<string[]> {
  const script = await fresh()
  return RUNS_BUILT ? [script.builtPath(source)] : ['--import', 'tsx', source]
}
