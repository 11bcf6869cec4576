// Project rules a type checker cannot see. Exit 1 with one line per finding.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'

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

// The composition root wires everything; nothing inside the gateway may depend on it. Only the
// commands that start a gateway (and tests and benchmarks, from outside src/) import it.
{
  const entries = new Set(['src/cli/commands/start.ts', 'src/cli/commands/dev.ts'])
  for (const file of walk('src')) {
    if (entries.has(file) || file.startsWith('src/main/')) continue
    if (/from\s+['"][^'"]*main\/start-gateway\.js['"]/.test(readFileSync(file, 'utf8'))) {
      findings.push(`${file}: imports the composition root src/main/start-gateway.ts (only ${[...entries].join(' and ')} may)`)
    }
  }
}

// No import cycles in src/ and actors/ (type-only imports included: a cycle of types is still two
// modules that cannot be understood, or moved, one without the other).
{
  const files = [...walk('src'), ...walk('actors')].filter((f) => f.endsWith('.ts') && !f.includes('/dashboard/web/'))
  const graph = new Map()
  for (const file of files) {
    const deps = []
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g)) {
      deps.push(join(dirname(file), m[1].replace(/\.js$/, '.ts')))
    }
    graph.set(file, deps)
  }
  for (const component of cycles(graph)) findings.push(`import cycle: ${component.sort().join(' <-> ')}`)
  // Folders too (src/<folder>, actors): a cycle of folders is two concerns that cannot be read,
  // or moved, one without the other, even when no two files import each other.
  const folderOf = (file) => (file.startsWith('actors/') ? 'actors' : file.split('/').slice(0, 2).join('/'))
  const folders = new Map()
  for (const [file, deps] of graph) {
    const from = folderOf(file)
    if (!folders.has(from)) folders.set(from, new Set())
    for (const dep of deps) if (graph.has(dep) && folderOf(dep) !== from) folders.get(from).add(folderOf(dep))
  }
  for (const component of cycles(new Map([...folders].map(([f, to]) => [f, [...to]])))) {
    const arrows = []
    for (const [file, deps] of graph) {
      for (const dep of deps)
        if (component.includes(folderOf(file)) && component.includes(folderOf(dep)) && folderOf(dep) !== folderOf(file)) arrows.push(`${file} -> ${dep}`)
    }
    findings.push(`folder cycle: ${component.sort().join(' <-> ')} (${arrows.slice(0, 6).join('; ')})`)
  }
}

// Comments stay with their code: a doc block is the doc of what follows it (two in a row: the
// first documents nothing, as a constant put between a class and its doc leaves it); a `#name` in
// a comment is a member its file declares (a name left behind by a rename points at nothing); and
// no comment points at a file outside the repository (a reader of the repository cannot open it).
{
  const commentPattern = /\/\*[\s\S]*?\*\/|(^|[^:'"`\\])\/\/[^\n]*/g
  const lineAt = (text, index) => text.slice(0, index).split('\n').length
  for (const file of [...walk('src'), ...walk('actors')]) {
    if (file.includes('/dashboard/web/') && !file.endsWith('.ts')) continue
    const text = readFileSync(file, 'utf8')
    for (const m of text.matchAll(/\*\/[ \t]*\n[ \t]*\/\*\*/g))
      findings.push(`${file}:${lineAt(text, m.index)}: two doc blocks in a row (the first documents nothing)`)
    const code = text.replace(commentPattern, (_, before) => before ?? '')
    const declared = new Set([...code.matchAll(/#([A-Za-z_]\w*)/g)].map((m) => m[1]))
    for (const comment of text.matchAll(commentPattern)) {
      for (const m of comment[0].matchAll(/(?:^|[\s(`'"[])#([A-Za-z_]\w*)/g)) {
        if (!declared.has(m[1])) findings.push(`${file}:${lineAt(text, comment.index + m.index)}: a comment names #${m[1]}, which this file does not declare`)
      }
      for (const m of comment[0].matchAll(/\.\.\/shared\/|\bARCHITECTURE\.md|\bSTYLE\.md|\bservice-spec\.md/g)) {
        findings.push(`${file}:${lineAt(text, comment.index + m.index)}: a comment points outside the repository (${m[0]})`)
      }
    }
  }
}

/** Tarjan's strongly connected components of a graph (node -> nodes): each one of more than one node is a cycle. */
function cycles(graph) {
  const out = []
  let index = 0
  const stack = []
  const meta = new Map()
  const strong = (v) => {
    meta.set(v, { index, low: index, on: true })
    index++
    stack.push(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!meta.has(w)) {
        strong(w)
        meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).low)
      } else if (meta.get(w).on) meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).index)
    }
    if (meta.get(v).low === meta.get(v).index) {
      const component = []
      let w
      do {
        w = stack.pop()
        meta.get(w).on = false
        component.push(w)
      } while (w !== v)
      if (component.length > 1) out.push(component)
    }
  }
  for (const v of graph.keys()) if (!meta.has(v)) strong(v)
  return out
}

if (findings.length) {
  console.error(findings.join('\n'))
  process.exit(1)
}
console.log('lint: ok')
