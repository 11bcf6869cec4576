// The suite as plain JavaScript, built once per run into dist-test/: the test files, their helpers
// and everything they import (src/, actors/, schemas/, harness/, scripts/), laid out as in the checkout
// (dist-test/test/ws/limits.test.js, dist-test/src/cli/main.js), so that what the gateway finds
// by walking up (schemas/catalogs, dist/dashboard, package.json) resolves as it does from dist/.
//
// Why: each test process loaded its whole import graph through tsx's loader hooks, about 1.3 s
// of CPU a file before it tested anything (178 files), and each gateway or command-line process a
// test starts as much again. Each file is transpiled on its own by esbuild (what tsx uses; no
// bundling, no type check: lint does that), with a source map, so that a failure under
// `node --enable-source-maps` (.taprc) points at the .ts line.
//
// A test file keeps the `import.meta.url` (and `dirname`, `filename`) of its source: what it finds
// beside itself (fixtures, the README, child scripts) is read where it is, not copied.
//
// Run before the suite (`npm test`, and tap's `before`), and by test/helpers/built.ts when a test is
// run on its own from its .ts file; either keeps a build made from the sources as they are.
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build, transform } from 'esbuild'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
export const OUT = join(ROOT, 'dist-test')
/** The folders the tests and the gateway's processes load (src/dashboard/web is the browser's, built by vite). */
export const SOURCE_DIRS = ['src', 'actors', 'schemas', 'harness', 'scripts', 'test']
const SKIP = [join(ROOT, 'src', 'dashboard', 'web')]
/**
 * Whether a file's import.meta stays its source's (see above): the tests and their helpers, the
 * harness (it finds anvil in node_modules from where it is) and the scripts the tests load
 * (docs.ts finds docs/ beside itself).
 */
const keepsSourcePlace = (source) => ['test', 'harness', 'scripts'].some((d) => source.startsWith(`${join(ROOT, d)}/`))

/** Every file under the source folders: .ts to transpile, .js and .mjs to copy. */
export function sourceFiles() {
  const out = []
  const walk = (dir) => {
    if (SKIP.includes(dir)) return
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (/\.(ts|js|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path)
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

/**
 * The source files' paths as one digest. A moved or renamed file keeps its modification time
 * (git mv renames it) and the count stays the same: by those two alone a build from before the
 * move looked fresh, the moved test had no built file at its new path, and its old one still ran.
 */
export function pathsDigest(files = sourceFiles()) {
  return createHash('sha256')
    .update(
      files
        .map((f) => relative(ROOT, f))
        .sort()
        .join('\n'),
    )
    .digest('hex')
}

/** Whether dist-test/ was built from the sources as they are now (none newer, none added, removed or moved). */
export function isFresh() {
  const stamp = join(OUT, 'built.json')
  if (!existsSync(stamp)) return false
  const built = JSON.parse(readFileSync(stamp, 'utf8'))
  const files = sourceFiles()
  return built.files === files.length && built.paths === pathsDigest(files) && built.newestSource >= newestSource(files)
}

/** The built file of a source file (test/x.test.ts → dist-test/test/x.test.js). */
export function builtPath(source) {
  return join(OUT, relative(ROOT, source)).replace(/\.ts$/, '.js')
}

/** One test file, transpiled with the import.meta of its source. */
async function transpile(source) {
  const to = builtPath(source)
  const code = readFileSync(source, 'utf8')
  const define = {
    'import.meta.url': JSON.stringify(pathToFileURL(source).href),
    'import.meta.filename': JSON.stringify(source),
    'import.meta.dirname': JSON.stringify(dirname(source)),
  }
  const result = await transform(code, {
    loader: 'ts',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'external',
    sourcefile: relative(dirname(to), source),
    sourcesContent: false,
    define,
    logLevel: 'warning',
  })
  mkdirSync(dirname(to), { recursive: true })
  writeFileSync(to, `${result.code}//# sourceMappingURL=${basename(to)}.map\n`)
  writeFileSync(`${to}.map`, result.map)
}

export async function buildForTests() {
  const files = sourceFiles()
  const started = Date.now()
  const newest = newestSource(files)
  rmSync(OUT, { recursive: true, force: true })
  const ts = files.filter((f) => f.endsWith('.ts'))
  // The sources in one call (the fastest); the test files one by one, each with its own import.meta.
  await Promise.all([
    build({
      entryPoints: ts.filter((f) => !keepsSourcePlace(f)),
      outdir: OUT,
      outbase: ROOT,
      bundle: false,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      sourcemap: 'linked',
      logLevel: 'warning',
    }),
    ...ts.filter(keepsSourcePlace).map(transpile),
  ])
  for (const js of files.filter((f) => !f.endsWith('.ts'))) {
    const to = join(OUT, relative(ROOT, js))
    mkdirSync(dirname(to), { recursive: true })
    cpSync(js, to)
  }
  // Written last: a build cut short is stale.
  writeFileSync(join(OUT, 'built.json'), JSON.stringify({ newestSource: newest, files: files.length, paths: pathsDigest(files) }))
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
