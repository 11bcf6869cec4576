// The test command (`npm test`, `npm run test:quick`, `npm test -- test/ws/limits.test.ts`):
// builds the suite once (scripts/build-for-tests.mjs: the test files and what they import, as
// JavaScript with source maps, into dist-test/), then runs tap on the built files, two at a time
// (.taprc). A test file named by its .ts path runs as its built .js; failures point at the .ts
// lines either way (node --enable-source-maps).
//
// Usage: node scripts/test.mjs [--quick] [test/x.test.ts ...] [-- tap options]
//   --quick   only the files that start no process (scripts/test-tiers.mjs): the edit-test loop
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildForTests, builtPath, isFresh } from './build-for-tests.mjs'
import { tier } from './test-tiers.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const TAP = join(ROOT, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs')
const args = process.argv.slice(2)
const quick = args.includes('--quick')
const files = []
const tapArgs = []
for (const arg of args.filter((a) => a !== '--quick')) {
  if (/\.test\.ts$/.test(arg)) files.push(builtPath(resolve(arg)))
  else tapArgs.push(arg)
}
if (quick) files.push(...tier('quick').map(builtPath))

if (isFresh()) console.log('dist-test/: up to date')
else {
  const { files: n, ms } = await buildForTests()
  console.log(`dist-test/: ${n} files in ${ms} ms`)
}
// tap is installed built with its default plugins, TypeScript's among them, which .taprc leaves
// out. The first run after an install rebuilds it, but only after it has made the test files'
// command line from the build as installed: every file of that run (every CI run: a fresh
// install) loaded the TypeScript plugin's module-loader hook for nothing. Built here first instead.
// (Its text is read, not imported: @tapjs/test does not load on its own.)
const builtWith = readFileSync(fileURLToPath(import.meta.resolve('@tapjs/test/test-built')), 'utf8')
if (/^export const signature = `[^`]*^@tapjs\/typescript$/m.test(builtWith)) {
  const build = spawnSync(process.execPath, [TAP, 'build'], { cwd: ROOT, stdio: 'inherit' })
  if (build.status !== 0) process.exit(build.status ?? 1)
}

const tap = spawn(process.execPath, [TAP, ...tapArgs, ...files], {
  cwd: ROOT,
  stdio: 'inherit',
})
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => tap.kill(signal))
tap.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
