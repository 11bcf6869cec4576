import { cpuMs, sampleRss } from './processes.js'
import type { Target } from './targets.js'

/** What a load generator reports for one measurement. */
export interface LoadFigures {
  requests: number
  rps: number
  p50Us: number
  p99Us: number
  errors: number
  /** Anything else worth keeping (service latency, generator lag, …). */
  extra?: Record<string, number>
}

/** One measurement of one target, with the target's own costs. */
export interface Sample extends LoadFigures {
  /** CPU time of the target's process (or processes: `Target.pids`) per request, in µs (the stub's not included). */
  cpuUsPerReq: number
  /** CPU time of the stub per request (a gateway turns a batch of 50 into 50 stub calls). */
  stubCpuUsPerReq: number
  /** Peak RSS of the target's process during the measurement (of several: the sum of each one's peak), MiB. */
  peakRssMiB: number
}

/** Medians over rounds, per scenario and target. */
export interface Row {
  scenario: string
  target: string
  label: string
  rounds: Sample[]
  rps: number
  p50Us: number
  p99Us: number
  cpuUsPerReq: number
  peakRssMiB: number
  errors: number
  extra?: Record<string, number>
  note?: string
}

export function median(xs: number[]): number {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b)
  if (v.length === 0) return Number.NaN
  const m = Math.floor(v.length / 2)
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2
}

/** Run `load` against a target, with its CPU time and peak RSS (and the stub's CPU time) around it. */
export async function measure(target: Target, stubPid: number, load: () => Promise<LoadFigures>): Promise<Sample> {
  const pids = target.pids ?? [target.pid]
  const cpuOfTarget = (): number => pids.reduce((sum, pid) => sum + cpuMs(pid), 0)
  const cpu0 = cpuOfTarget()
  const stub0 = target.pid === stubPid ? 0 : cpuMs(stubPid)
  const rss = sampleRss(pids)
  const figures = await load()
  const peak = rss.stop().reduce((a, b) => a + b, 0)
  // A process that died meanwhile (a worker restarted) reads NaN: the figure shows it, never a partial sum.
  const cpu = cpuOfTarget() - cpu0
  const stubCpu = target.pid === stubPid ? 0 : cpuMs(stubPid) - stub0
  const per = (ms: number): number => (figures.requests > 0 ? Math.round((ms * 1000 * 10) / figures.requests) / 10 : Number.NaN)
  return { ...figures, cpuUsPerReq: per(cpu), stubCpuUsPerReq: per(stubCpu), peakRssMiB: peak }
}

/** Medians of the rounds of one target in one scenario. */
export function summarise(scenario: string, target: Target, rounds: Sample[], note?: string): Row {
  const pick = (f: (s: Sample) => number): number => median(rounds.map(f))
  const extraKeys = new Set(rounds.flatMap((r) => Object.keys(r.extra ?? {})))
  const extra = extraKeys.size ? Object.fromEntries([...extraKeys].map((k) => [k, pick((s) => s.extra?.[k] ?? Number.NaN)])) : undefined
  return {
    scenario,
    target: target.id,
    label: target.label,
    rounds,
    rps: Math.round(pick((s) => s.rps)),
    p50Us: Math.round(pick((s) => s.p50Us)),
    p99Us: Math.round(pick((s) => s.p99Us)),
    cpuUsPerReq: pick((s) => s.cpuUsPerReq),
    peakRssMiB: Math.max(...rounds.map((s) => s.peakRssMiB)),
    errors: rounds.reduce((a, s) => a + s.errors, 0),
    extra,
    note,
  }
}

/**
 * Interleave: every round visits every target, in alternating directions (A B C, C B A, …), so
 * that a slow drift of the shared machine hits every target alike. Returns samples by target id.
 */
export async function interleave(targets: Target[], rounds: number, run: (t: Target) => Promise<Sample>): Promise<Map<string, Sample[]>> {
  const out = new Map<string, Sample[]>(targets.map((t) => [t.id, []]))
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? targets : [...targets].reverse()
    for (const t of order) out.get(t.id)!.push(await run(t))
  }
  return out
}
