import { readFileSync } from 'node:fs'

/**
 * Reads a V8 `.cpuprofile` (node --cpu-prof) and sums self time by function and by file, so that
 * the top costs of a run can be printed and kept with the results (no DevTools needed).
 */

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  hitCount?: number
  children?: number[]
}

interface CpuProfile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
  startTime: number
  endTime: number
}

export interface CostLine {
  name: string
  selfMs: number
  /** Share of all samples, idle and GC included. */
  percent: number
}

export interface ProfileSummary {
  totalMs: number
  byFunction: CostLine[]
  byFile: CostLine[]
}

/** Where a frame comes from, short: `src/upstream/node.ts`, `node:internal/…`, `(native)`. */
function shortUrl(url: string): string {
  if (url === '') return '(native)'
  const m = url.match(/\/(src|actors|bench|node_modules)\/(.*)$/)
  if (m)
    return m[1] === 'node_modules'
      ? `node_modules/${m[2]
          .split('/')
          .slice(0, m[2].startsWith('@') ? 2 : 1)
          .join('/')}`
      : `${m[1]}/${m[2]}`
  return url.replace(/^file:\/\//, '')
}

/**
 * Self time by function and by file. With `windows` ([from, to] in µs of the profile's clock, which
 * on Linux is CLOCK_MONOTONIC, what `process.hrtime` reads in any process), only the samples
 * inside them count: the stretch of a run that was measured, not its start-up.
 */
export function summariseProfile(path: string, top = 25, windows?: Array<[number, number]>): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const selfUs = new Map<number, number>()
  const inside = (us: number): boolean => windows === undefined || windows.some(([from, to]) => us >= from && us <= to)
  let atUs = profile.startTime
  let totalUs = 0
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0
    atUs += delta
    if (!inside(atUs)) continue
    totalUs += delta
    const id = profile.samples[i]
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta)
  }
  if (windows === undefined) totalUs = profile.endTime - profile.startTime
  const fn = new Map<string, number>()
  const file = new Map<string, number>()
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!
    const where = shortUrl(node.callFrame.url)
    const name = `${node.callFrame.functionName || '(anonymous)'} ${where}${node.callFrame.url ? `:${node.callFrame.lineNumber + 1}` : ''}`
    fn.set(name, (fn.get(name) ?? 0) + us)
    file.set(where, (file.get(where) ?? 0) + us)
  }
  const lines = (m: Map<string, number>): CostLine[] =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, selfMs: Math.round(us / 100) / 10, percent: Math.round((1000 * us) / Math.max(1, totalUs)) / 10 }))
  return { totalMs: Math.round(totalUs / 1000), byFunction: lines(fn), byFile: lines(file) }
}

/** The summary as text for stdout. */
export function formatProfile(s: ProfileSummary): string {
  const out = [`total ${s.totalMs} ms sampled`, '', 'self time by function:']
  for (const l of s.byFunction) out.push(`  ${l.percent.toFixed(1).padStart(5)}%  ${l.selfMs.toFixed(0).padStart(6)} ms  ${l.name}`)
  out.push('', 'self time by file:')
  for (const l of s.byFile) out.push(`  ${l.percent.toFixed(1).padStart(5)}%  ${l.selfMs.toFixed(0).padStart(6)} ms  ${l.name}`)
  return out.join('\n')
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  process.stdout.write(formatProfile(summariseProfile(process.argv[2], Number(process.argv[3] ?? 30))) + '\n')
}
