// Reads the TAP text of a test run and prints what a reader of the run's last lines needs:
// each failing test file with its failing assertions and their diagnostics, and the slowest files.
// CI shows only the tail of its output, and a failure deep in 20,000 lines is otherwise lost.
// Usage: node scripts/test-summary.mjs FILE.tap [EXIT_STATUS of the test command]
import { readFileSync } from 'node:fs'

/** A file by its source's name: the suite runs the built test/x.test.js of test/x.test.ts. */
const source = (name) => name.replace(/\.js$/, '.ts')
const lines = readFileSync(process.argv[2] ?? '/dev/stdin', 'utf8').split('\n')
const files = [] // { name, ms, ok, failures: string[] }
let current = null
let inFailure = false
for (const line of lines) {
  const start = /^# Subtest: (?:dist-test\/)?(test\/\S+)/.exec(line)
  if (start) {
    current = { name: source(start[1]), failures: [] }
    inFailure = false
    continue
  }
  const end = /^(not )?ok \d+ - (?:dist-test\/)?(test\/\S+)(?: # time=([\d.]+)ms)?/.exec(line)
  if (end) {
    files.push({ name: source(end[2]), ok: !end[1], ms: Number(end[3] ?? 0), failures: current?.failures ?? [] })
    current = null
    inFailure = false
    continue
  }
  if (!current) continue
  if (/^\s*not ok /.test(line)) {
    current.failures.push(line)
    inFailure = true
    continue
  }
  if (inFailure) {
    // The YAML block after a failing assertion, up to the next assertion or subtest.
    if (/^\s*(ok |# Subtest:)/.test(line)) inFailure = false
    else if (current.failures.length < 400) current.failures.push(line)
  }
}

const failed = files.filter((f) => !f.ok)
console.log(`\n# Test summary: ${files.length} files, ${failed.length} failed`)
for (const f of failed) {
  console.log(`\n## FAILED ${f.name} (${(f.ms / 1000).toFixed(1)} s)`)
  for (const l of f.failures) console.log(l)
}
const slowest = [...files].sort((a, b) => b.ms - a.ms).slice(0, 15)
console.log('\n# The slowest files')
for (const f of slowest) console.log(`${(f.ms / 1000).toFixed(1).padStart(7)} s  ${f.name}`)
const total = files.reduce((s, f) => s + f.ms, 0)
console.log(`${(total / 1000).toFixed(0).padStart(7)} s  all files together (two run at once)`)
const status = Number(process.argv[3] ?? 0)
if (status !== 0 && failed.length === 0) {
  // Seen once: tap exited 1 on the coverage of its `before` script with every file passing.
  console.log(`\n# The test command exited ${status} although no test file failed: the reason is in the last lines before this summary.`)
}
