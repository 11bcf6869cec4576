import type { Row } from './measure.js'
import { SLOWLORIS_P95_GOAL_US, SLOWLORIS_ROWS, SLOWLORIS_SOCKETS } from './slowloris-scenario.js'
import { PINNED_ROWS, PINNED_SHARE } from './pinned-latency-scenario.js'
import { METERING_ROWS } from './metering-scenario.js'

/** A comparison within one scenario of one run. */
export interface Ratio {
  scenario: string
  name: string
  value: number
  /** For the issue's targets: the bound and whether it was met. */
  goal?: string
  met?: boolean
}

function find(rows: Row[], scenario: string, target: string): Row | undefined {
  return rows.find((r) => r.scenario === scenario && r.target === target)
}

const round = (x: number, d = 2): number => Math.round(x * 10 ** d) / 10 ** d

/** The ratios and the verdicts on issue 3's targets, from the rows of one run. */
export function computeRatios(rows: Row[], baseline?: string): Ratio[] {
  const out: Ratio[] = []
  const rps = (s: string, a: string, b: string, name: string, goal?: { min?: number; text: string }): void => {
    const x = find(rows, s, a)
    const y = find(rows, s, b)
    if (!x || !y?.rps) return
    const value = round(x.rps / y.rps)
    out.push({ scenario: s, name, value, ...(goal ? { goal: goal.text, met: value >= (goal.min ?? 0) } : {}) })
  }
  // Issue 14: at least nginx's throughput on each of its six scenarios (issue 3 asked 0.6x of small
  // calls). batch-distinct, added beside them, is reported without a verdict.
  const issue14 = new Set(['small', 'small-distinct', 'large', 'large-gzip', 'batch', 'ws'])
  for (const s of ['small', 'small-distinct', 'large', 'large-gzip', 'batch', 'batch-distinct', 'ws']) {
    const isSmall = s === 'small' || s === 'small-distinct'
    rps(s, 'gateway', 'nginx', 'gateway / nginx', issue14.has(s) ? { min: 1, text: '>= 1.0 (issue 14)' } : undefined)
    rps(s, 'gateway', 'node-proxy', 'gateway / plain Node proxy', isSmall ? { min: 2, text: '>= 2' } : undefined)
    rps(s, 'gateway', 'stub', 'gateway / stub directly')
    if (baseline) {
      rps(s, 'gateway', `gateway@${baseline}`, `gateway / gateway@${baseline} (speed-up)`)
      rps(s, 'gateway-http-upstream', `gateway-http-upstream@${baseline}`, `HTTP-upstream gateway / same @${baseline} (speed-up)`)
    }
    rps(s, 'gateway-http-upstream', 'gateway', 'HTTP-upstream gateway / WS-upstream gateway')
  }
  for (const s of ['small', 'small-distinct']) {
    const metered = find(rows, s, 'gateway')
    const unmetered = find(rows, s, 'gateway-no-metering')
    // Rounds run one after the other: shown, not judged (the machine drifts more than 5% between them).
    if (metered && unmetered?.rps)
      out.push({ scenario: s, name: 'metering cost (1 - metered / unmetered throughput, sequential rounds)', value: round(1 - metered.rps / unmetered.rps, 3) })
  }
  // Judged from the metering scenario: both loaded at once, the median of each round's own ratio.
  const meteringCost = find(rows, METERING_ROWS, 'gateway')?.extra?.meteringCost
  if (meteringCost !== undefined) {
    const name = 'metering cost (CPU per distinct call it adds, both loaded at once)'
    out.push({ scenario: METERING_ROWS, name, value: round(meteringCost, 3), goal: '<= 0.05 (issue 14)', met: meteringCost <= 0.05 })
  }
  // Workers: N gateway processes against one, same run. Issue 14 asks >= 1.5x for 2 workers where the
  // machine leaves a core free for them: judged only where a core per worker remains beside one for
  // wrk and the stub; on fewer cores the ratio is reported without a verdict (and a note says why).
  const oneWorker = find(rows, 'workers', 'workers-1')
  for (const r of rows.filter((x) => x.scenario === 'workers' && x !== oneWorker)) {
    const n = r.extra?.workers ?? Number.NaN
    const cores = r.extra?.cores ?? 0
    const judged = n === 2 && cores - 1 >= n
    const goal = judged ? { min: 1.5, text: '>= 1.5 (issue 14)' } : undefined
    rps('workers', r.target, 'workers-1', `${n} workers / 1 worker (${cores} cores)`, goal)
    if (!oneWorker) continue
    const cpu = round(r.cpuUsPerReq / oneWorker.cpuUsPerReq)
    out.push({ scenario: 'workers', name: `${n} workers / 1 worker, CPU µs per request`, value: cpu })
  }
  for (const share of [25, 50, 75]) {
    const s = `fixed-rate-${share}%`
    const gw = find(rows, s, 'gateway')
    const direct = find(rows, s, 'stub')
    if (!gw || !direct) continue
    const added = gw.p99Us - direct.p99Us
    out.push({
      scenario: s,
      name: 'gateway p99 - direct p99, µs (from due time)',
      value: added,
      ...(share === 50 ? { goal: '< 1000', met: added < 1000 } : {}),
    })
    const svc = (gw.extra?.serviceP99Us ?? Number.NaN) - (direct.extra?.serviceP99Us ?? Number.NaN)
    if (Number.isFinite(svc)) out.push({ scenario: s, name: 'gateway p99 - direct p99, µs (from actual send)', value: Math.round(svc) })
  }
  for (const target of ['gateway', 'nginx', 'node-proxy']) {
    const alone = rows.find((r) => r.target === target && r.scenario.endsWith('alone'))
    const flow = rows.find((r) => r.target === target && r.scenario.endsWith('gzip flow'))
    if (!alone || !flow) continue
    out.push({
      scenario: 'gzip-isolation',
      name: `${target}: small-call p99 added by a gzip flow, µs (CPU contention included)`,
      value: flow.p99Us - alone.p99Us,
    })
    const eld = flow.extra?.eldP99Us
    if (eld !== undefined && Number.isFinite(eld)) {
      // The direct measure: how late the event loop ran during the gzip flow. 1 MB gzips on the
      // loop (tens of ms each at level 6, dozens per second) would put its p99 far above 10 ms;
      // the max is kept too, but one descheduling of the process on a shared machine sets it.
      out.push({
        scenario: 'gzip-isolation',
        name: `${target}: event-loop delay p99 during the gzip flow, µs`,
        value: eld,
        ...(target === 'gateway' ? { goal: '< 10000 (1 MB gzips on the loop: tens of ms each)', met: eld < 10_000 } : {}),
      })
      out.push({ scenario: 'gzip-isolation', name: `${target}: event-loop delay max during the gzip flow, µs`, value: flow.extra?.eldMaxUs ?? Number.NaN })
    }
  }
  // Slowloris (issue 11): the p95 of normal calls while the sockets drip, against the same load alone.
  for (const target of ['gateway', 'nginx']) {
    const alone = find(rows, SLOWLORIS_ROWS.without, target)
    const dripped = find(rows, SLOWLORIS_ROWS.with, target)
    if (!alone || !dripped) continue
    const p95 = (r: Row): number => r.extra?.p95Us ?? Number.NaN
    const goal = target === 'gateway' ? { goal: `< ${SLOWLORIS_P95_GOAL_US} (issue 11)`, met: p95(dripped) < SLOWLORIS_P95_GOAL_US } : {}
    out.push({ scenario: 'slowloris', name: `${target}: p95 without slowloris, µs`, value: p95(alone) })
    out.push({ scenario: 'slowloris', name: `${target}: p95 with ${SLOWLORIS_SOCKETS} slowloris sockets, µs`, value: p95(dripped), ...goal })
    out.push({ scenario: 'slowloris', name: `${target}: p95 with / without`, value: round(p95(dripped) / p95(alone)) })
    out.push({ scenario: 'slowloris', name: `${target}: p99 with / without`, value: round(dripped.p99Us / alone.p99Us) })
  }
  // Pinned latency (issue 14): each alone on one core, the gateway's p99 at the same offered rate as nginx's.
  rps(PINNED_ROWS.max, 'gateway', 'nginx', 'gateway / nginx, each alone on one core (wrk on the other)')
  const pinnedGw = find(rows, PINNED_ROWS.latency, 'gateway')
  const pinnedNginx = find(rows, PINNED_ROWS.latency, 'nginx')
  if (pinnedGw && pinnedNginx) {
    const name = `gateway p99 / nginx p99 at ${PINNED_SHARE}% of nginx's pinned max`
    const due = round(pinnedGw.p99Us / pinnedNginx.p99Us)
    out.push({ scenario: 'pinned-latency', name: `${name} (from due time)`, value: due, goal: '<= 1 (issue 14)', met: pinnedGw.p99Us <= pinnedNginx.p99Us })
    const sent = (r: Row): number => r.extra?.serviceP99Us ?? Number.NaN
    out.push({ scenario: 'pinned-latency', name: `${name} (from actual send)`, value: round(sent(pinnedGw) / sent(pinnedNginx)) })
  }
  return out
}

const fmtMs = (us: number): string => (Number.isFinite(us) ? (us / 1000).toFixed(2) : '-')
const fmt = (x: number, d = 0): string => (Number.isFinite(x) ? x.toFixed(d) : '-')

/** The results as a fixed-width table for stdout. */
export function formatTable(rows: Row[], ratios: Ratio[], notes: string[]): string {
  const head = ['scenario', 'target', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'peak RSS MiB', 'errors']
  const body = rows.map((r) => [
    r.scenario,
    r.target,
    fmt(r.rps),
    fmtMs(r.p50Us),
    fmtMs(r.p99Us),
    fmt(r.cpuUsPerReq, 1),
    fmt(r.peakRssMiB, 0),
    String(r.errors),
  ])
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)))
  const line = (cells: string[]): string => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
  const out = [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line), '', 'ratios:']
  for (const r of ratios) {
    const verdict = r.goal ? `  target ${r.goal}: ${r.met ? 'met' : 'MISSED'}` : ''
    out.push(`  ${r.scenario.padEnd(16)} ${r.name}: ${r.value}${verdict}`)
  }
  if (notes.length) out.push('', 'notes:', ...notes.map((n) => `  - ${n}`))
  return out.join('\n')
}

/** What run.ts writes to latest.json, as far as the Markdown rendering needs it. */
export interface RunResult {
  machine: Record<string, unknown>
  options: { rounds: number; durationS: number; baseline?: string; quick: boolean }
  elapsedS: number
  rows: Row[]
  ratios: Ratio[]
  notes: string[]
}

/** The figures of a run as Markdown, for bench/README.md (`--update-readme`) and latest.md. */
export function formatMarkdown(r: RunResult): string {
  const m = r.machine
  const out = [
    `Run of ${String(m.date).slice(0, 16).replace('T', ' ')} UTC on ${m.nproc} × ${m.cpu} (load average ${JSON.stringify(m.loadavgAtStart)} at the start, ${JSON.stringify(m.loadavgAtEnd)} at the end), Node ${m.node}, ${m.nginx ?? 'no nginx'}, ${m.wrk ?? 'no wrk'}; commit \`${m.commit}\`${m.dirty ? ' with uncommitted changes' : ''}. ` +
      `${r.options.rounds} round(s) of ${r.options.durationS} s per target${r.options.baseline ? `, baseline \`${r.options.baseline}\`` : ''}${r.options.quick ? ' (--quick: not figures to quote)' : ''}; ${r.elapsedS} s in all.`,
    '',
    '| scenario | target | req/s | p50 ms | p99 ms | CPU µs/req | peak RSS MiB | errors |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
    ...r.rows.map(
      (x) =>
        `| ${x.scenario} | ${x.target} | ${fmt(x.rps)} | ${fmtMs(x.p50Us)} | ${fmtMs(x.p99Us)} | ${fmt(x.cpuUsPerReq, 1)} | ${fmt(x.peakRssMiB, 0)} | ${x.errors} |`,
    ),
    '',
    '| scenario | ratio | value | target |',
    '|---|---|---:|---|',
    ...r.ratios.map((x) => `| ${x.scenario} | ${x.name} | ${x.value} | ${x.goal ? `${x.goal}: **${x.met ? 'met' : 'missed'}**` : ''} |`),
  ]
  if (r.notes.length) out.push('', ...r.notes.map((n) => `- ${n}`))
  return out.join('\n')
}
