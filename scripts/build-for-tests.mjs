// The gateway as plain JavaScript for the processes the tests start (`tollgate start`, the
// command line): dist-test/, laid out as dist/ is (dist-test/src/cli/main.js), so that what the
// code finds by walking up (schemas/catalogs, dist/dashboard, package.json) resolves the same.
//
// Why: a process started through tsx spends about 1.3 s more CPU loading the gateway than the
// same code as JavaScript (2.2 s against 0.85 s here), and the suite starts a few hundred of them.
// Each file is transpiled on its own by esbuild, the compiler tsx itself uses, so the processes
// run what the tests run in-process: no bundling, no type check (lint does that).
//
// Run by tap before the suite (.taprc `before`), and by test/helpers/built.ts when a test is run
// on its own; either keeps a build made from the sources as they are.
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
export const OUT = join(ROOT, 'dist-test')
/** The folders the gateway's processes load (src/dashboard/web is the browser's, built by vite). */
export const SOURCE_DIRS = ['src', 'actors', 'schemas']
const SKIP = [join(ROOT, 'src', 'dashboard', 'web')]

/** Every file under the source folders: .ts to transpile, .js to copy. */
export function sourceFiles() {
  const out = []
  const walk = (dir) => {
    if (SKIP.includes(dir)) return
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (/\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path)
    }
  }
  for (const d of SOURCE_DIRS) walk(join(ROOT, d))
  return out
}

/** The newest modification time among the sources and this script (ms), to tell whether the build is stale. */
export function newestSource(files = sourceFiles()) {
  let newest = statSync(fileURLToPath(import.meta.url)).mtimeMs
  for (const f of files) newest = Math.max(newest, statSync(f).mtimeMs)
  return newest
}

/** Whether dist-test/ was built from the sources as they are now (none newer, none added or removed). */
export function isFresh() {
  const stamp = join(OUT, 'built.json')
  if (!existsSync(stamp)) return false
  const built = JSON.parse(readFileSync(stamp, 'utf8'))
  const files = sourceFiles()
  return built.files === files.length && built.newestSource >= newestSource(files)
}

export async function buildForTests() {
  const files = sourceFiles()
  const started = Date.now()
  const newest = newestSource(files)
  rmSync(OUT, { recursive: true, force: true })
  const ts = files.filter((f) => f.endsWith('.ts'))
  await build({
    entryPoints: ts,
    outdir: OUT,
    outbase: ROOT,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  })
  for (const js of files.filter((f) => f.endsWith('.js'))) {
    const to = join(OUT, relative(ROOT, js))
    mkdirSync(dirname(to), { recursive: true })
    cpSync(js, to)
  }
  // Written last: a build cut short is stale.
  writeFileSync(join(OUT, 'built.json'), JSON.stringify({ newestSource: newest, files: files.length }))
  return { files: files.length, ms: Date.now() - started }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  // Built already from these sources: kept, so that a second run beside this one (two tap
  // commands in one checkout) does not rebuild under the other's processes.
  if (isFresh()) console.log('dist-test/: up to date')
  else {
    const { files, ms } = await buildForTests()
    console.log(`dist-test/: ${files} files in ${ms} ms`)
  }
}
