// Project rules a type checker cannot see. Exit 1 with one line per finding.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

const findings = []
function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) walk(p, out)
    else if (/\.(ts|mts|js|mjs)$/.test(name)) out.push(p)
  }
  return out
}

// actors/ is the pure core: the dependency arrow goes from src/ to actors/, never back.
for (const file of walk('actors')) {
  const text = readFileSync(file, 'utf8')
  for (const m of text.matchAll(/from\s+['"]([^'"]+)['"]/g)) {
    if (/(^|\/)src\//.test(m[1]) || m[1].startsWith('../../src')) findings.push(`${file}: imports ${m[1]} (actors/ must not import from src/)`)
  }
}

// A narrowed test run must not land.
for (const file of walk('test')) {
  const text = readFileSync(file, 'utf8')
  if (/\b(t|tap|test)\.only\(/.test(text)) findings.push(`${file}: .only( narrows the test run`)
}

// Keys must never be logged: no logger call may name apiKey.
for (const file of walk('src')) {
  const text = readFileSync(file, 'utf8')
  if (/logger\.(info|warn|error|debug|trace)\([^)]*apiKey/.test(text)) findings.push(`${file}: a logger call mentions apiKey`)
}

if (findings.length) {
  console.error(findings.join('\n'))
  process.exit(1)
}
console.log('lint: ok')
