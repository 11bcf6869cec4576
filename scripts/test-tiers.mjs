// The quick tier of the suite (`npm run test:quick`): the test files that start no process of their
// own (no anvil, nats-server, gateway or command-line process, browser or nginx), for the
// edit-test loop. `npm test` runs every file, as CI does.
//
// A file is in the quick tier when nothing it imports from test/ or harness/, followed import by
// import, loads node:child_process or a browser driver: that is how every process a test starts
// is started (harness/anvil.ts, harness/nats-server.ts, test/helpers/gateway-process.ts, ...). The
// gateway's own sources (src/) are not followed: they may start processes (workers, the dev
// fleet), but only when a test asks them to through a helper that is itself followed here, or
// spawns directly (test/cli/dev.test.ts imports child_process itself).
//
// Usage: node scripts/test-tiers.mjs [quick|slow]   prints the built test files of the tier, one a line
import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** What starts a process: imported by a module of test/ or harness/, it puts the file in the slow tier. */
const STARTS_PROCESSES = /from ['"](?:node:)?child_process['"]|from ['"]playwright-core['"]/
/** The folders whose modules are followed (src/ is not: see above). */
const FOLLOWED = [join(ROOT, 'test'), join(ROOT, 'harness')]

function testFiles(dir = join(ROOT, 'test')) {
  const out = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...testFiles(path))
    else if (entry.name.endsWith('.test.ts')) out.push(path)
  }
  return out.sort()
}

/** The relative imports of a module that load code (type-only imports are erased), as source paths. */
function importsOf(path) {
  const text = readFileSync(path, 'utf8')
  const out = []
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s+(?!type\s)(?:[^'"]*?\sfrom\s+)?['"](\.[^'"]+)['"]/g)) out.push(m[1])
  for (const m of text.matchAll(/import\(\s*['"](\.[^'"]+)['"]\s*\)/g)) out.push(m[1])
  return out.map((spec) => resolve(dirname(path), spec).replace(/\.js$/, '.ts'))
}

const startsCache = new Map()
/** Whether loading this module (followed through test/ and harness/) can start a process. */
function startsProcesses(path, seen = new Set()) {
  if (startsCache.has(path)) return startsCache.get(path)
  if (seen.has(path) || !FOLLOWED.some((d) => path.startsWith(`${d}/`))) return false
  seen.add(path)
  let text
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    return false // a .js or .mjs file of the checkout, not a test module
  }
  const result = STARTS_PROCESSES.test(text) || importsOf(path).some((p) => startsProcesses(p, seen))
  startsCache.set(path, result)
  return result
}

/** The test files of a tier, as source paths. */
export function tier(name) {
  const files = testFiles()
  return files.filter((f) => startsProcesses(f) === (name === 'slow'))
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const name = process.argv[2] ?? 'quick'
  for (const f of tier(name)) console.log(relative(ROOT, f))
}
