import { loadavg } from 'node:os'
import { interleave, measure, summarise, type LoadFigures, type Row, type Sample } from './measure.js'
import { checkTarget, httpScenarios, wrkLoad, type Bodies } from './http-scenarios.js'
import { figures, openLoop } from './latency-scenarios.js'
import { busyPercent, cpuTimes, pin, whyNoPinning } from './cpu-pinning.js'
import type { BenchContext } from './context.js'
import type { Target } from './targets.js'

/** The core the target under test has to itself, and the one the load generator, the stub and every other process of the run share. */
export const TARGET_CPU = 0
export const LOAD_CPU = 1
/** Issue 14: the latency is compared at this share of nginx's pinned maximum. */
export const PINNED_SHARE = 50
/** The rows of the scenario: each target's pinned maximum (wrk), then both at the same open-loop rate. */
export const PINNED_ROWS = { max: 'pinned-max', latency: `pinned-${PINNED_SHARE}%-of-nginx` } as const

/**
 * The `pinned-latency` scenario (issue 14: "latency at an equal offered rate"). Each target runs
 * alone on CPU 0 (taskset, every thread), while the load generator, the stub and every other
 * process of the run share CPU 1, so that the target's latency is its own and not a queue for
 * the cores it shares with the load (as in `fixed-rate`, where three processes need 1.6–1.8 of 2
 * cores). First each target's pinned maximum with wrk (small calls, as `small`), then the
 * open-loop generator at 50% of nginx's pinned maximum against nginx and the gateway, rounds
 * interleaved. The verdict: the gateway's p99 (from the due time) no worse than nginx's at that
 * same rate. Every process's former CPUs are put back at the end: the other scenarios run unpinned.
 */
export async function runPinnedLatency(ctx: BenchContext, bodies: Bodies): Promise<Row[]> {
  const why = whyNoPinning() ?? (ctx.wrk ? undefined : 'wrk is not installed (apt-get install -y wrk, or run bench/setup.sh)')
  if (why !== undefined) {
    ctx.notes.push(`pinned-latency: skipped, ${why}`)
    return []
  }
  const wrk = ctx.wrk!
  const small = httpScenarios(ctx, bodies).find((s) => s.name === 'small')!
  const targets: Target[] = []
  for (const id of ['nginx', 'gateway']) {
    const t = ctx.set.targets.get(id)
    const bad = t ? await checkTarget(t, small) : 'not in this run'
    if (bad) {
      ctx.notes.push(`pinned-latency: skipped, ${id} ${t ? `answered wrongly before measuring: ${bad}` : 'is not in this run (nginx needs bench/setup.sh)'}`)
      return []
    }
    targets.push(t!)
  }
  const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100)
  const onLoadCpu = String(LOAD_CPU)
  // Every process of the run, the idle targets included: on CPU 0, the target under test is alone of ours.
  const everyPid = new Set([ctx.set.stubPid, ...[...ctx.set.targets.values()].flatMap((t) => t.pids ?? [t.pid])])
  const restores: Array<() => Promise<void>> = []
  try {
    for (const pid of everyPid) restores.push(await pin(pid, onLoadCpu))
    /** `load` with `t` alone on CPU 0, and how busy each of the two CPUs was meanwhile (anyone's work: the machine is shared). */
    const alone = (t: Target, load: () => Promise<LoadFigures>) => async (): Promise<LoadFigures> => {
      const pids = t.pids ?? [t.pid]
      for (const pid of pids) await pin(pid, String(TARGET_CPU))
      const before = cpuTimes()
      try {
        const f = await load()
        const after = cpuTimes()
        return { ...f, extra: { ...f.extra, targetCpuBusyPct: busyPercent(before, after, TARGET_CPU), loadCpuBusyPct: busyPercent(before, after, LOAD_CPU) } }
      } finally {
        for (const pid of pids) await pin(pid, onLoadCpu)
      }
    }
    const pinning = `the target alone on CPU ${TARGET_CPU}, the load, the stub and the run's other processes on CPU ${LOAD_CPU} (taskset)`

    ctx.log(`pinned-latency: maximum of eth_blockNumber (wrk, ${small.connections} connections) with ${pinning} — ${targets.map((t) => t.id).join(', ')}`)
    const max = (t: Target, durationS: number) => alone(t, () => wrkLoad(wrk, t, small, durationS, onLoadCpu))
    if (ctx.opts.warmupS > 0) for (const t of targets) await max(t, ctx.opts.warmupS)()
    const maxima = await interleave(targets, ctx.opts.rounds, (t) => measure(t, ctx.set.stubPid, max(t, ctx.opts.durationS)))
    const maxRows = targets.map((t) => summarise(PINNED_ROWS.max, t, maxima.get(t.id)!, `wrk on CPU ${LOAD_CPU}; ${pinning}`))
    const nginxMax = maxRows[0].rps
    if (!(nginxMax > 0)) {
      ctx.notes.push('pinned-latency: nginx served nothing pinned; no rate to compare at')
      return maxRows
    }

    const rate = Math.max(100, Math.round((nginxMax * PINNED_SHARE) / 100))
    ctx.log(
      `pinned-latency: eth_blockNumber at ${rate} req/s (open loop on CPU ${LOAD_CPU}, ${PINNED_SHARE}% of nginx's pinned max ${nginxMax}) — nginx, gateway`,
    )
    const warm = Math.min(1, Math.max(0.3, ctx.opts.warmupS))
    const latency = (t: Target) => alone(t, async () => figures(await openLoop(t, bodies.small, rate, ctx.opts.durationS, warm, onLoadCpu)))
    const samples = await interleave(targets, ctx.opts.rounds, (t) => measure(t, ctx.set.stubPid, latency(t)))
    const loadAtEnd = loadavg().map((x) => Math.round(x * 100) / 100)
    const machine = `load average ${JSON.stringify(loadAtStart)} at the scenario's start, ${JSON.stringify(loadAtEnd)} at its end`
    const note = `open loop at ${rate} req/s (${PINNED_SHARE}% of nginx's pinned max ${nginxMax}) on CPU ${LOAD_CPU}; ${pinning}; ${machine}`
    const latencyRows = targets.map((t) => summarise(PINNED_ROWS.latency, t, samples.get(t.id)!, note))
    ctx.notes.push(`pinned-latency: ${note}`)
    for (const [t, r] of targets.map((x, i) => [x, latencyRows[i]] as const)) ctx.notes.push(`pinned-latency/${t.id}: ${fromTheSend(samples.get(t.id)!, r)}`)
    return [...maxRows, ...latencyRows]
  } finally {
    for (const restore of restores) await restore()
  }
}

/** What the table's columns leave out: latency from the actual send, the generator's lag, how busy each CPU was. */
function fromTheSend(rounds: Sample[], row: Row): string {
  const x = row.extra ?? {}
  const ms = (us: number | undefined): string => (us === undefined || !Number.isFinite(us) ? '-' : (us / 1000).toFixed(2))
  return (
    `from the send p50 ${ms(x.serviceP50Us)} ms, p99 ${ms(x.serviceP99Us)} ms (from the due time ${ms(row.p50Us)} / ${ms(row.p99Us)} ms); ` +
    `generator lag p99 ${ms(x.generatorLagP99Us)} ms; CPU ${TARGET_CPU} busy ${x.targetCpuBusyPct}%, CPU ${LOAD_CPU} busy ${x.loadCpuBusyPct}%; ` +
    `${row.errors} errors in ${rounds.length} round(s) (medians)`
  )
}
