import type { BenchContext } from './context.js'
import { httpScenarios, wrkLoad, type Bodies } from './http-scenarios.js'
import { measure, median, summarise, type Row, type Sample } from './measure.js'
import type { Target } from './targets.js'

/**
 * The `metering` scenario: the cost of usage metering as the CPU per distinct call it adds, with the
 * metered gateway and the unmetered one loaded AT ONCE (each by its own wrk with half the
 * connections), so that both see the same machine in every round, and the cost is the median of
 * each round's own ratio. The throughput ratio of `small-distinct` compares rounds run one after the
 * other: on a machine that drifts 5-15% between them it reported 11% one run and -0.5% the next,
 * where a profile put metering at 0.5% of the gateway's CPU (bench/README.md, session 8). Which of
 * the two starts its load first alternates by round.
 *
 * Distinct calls, each one a call of its own: under `small`, identical calls in flight are shared,
 * and how many are shared depends on how many arrive together, so the CPU per call of two gateways
 * loaded at once differs by how the scheduler favoured them (the metered one measured 21% cheaper
 * per call in 4 rounds out of 4); metering does the same work for each call either way.
 */
export async function runMeteringScenario(ctx: BenchContext, bodies: Bodies): Promise<Row[]> {
  const { wrk, set, opts } = ctx
  const metered = set.targets.get('gateway')
  const unmetered = set.targets.get('gateway-no-metering')
  if (!wrk || !metered || !unmetered) {
    ctx.notes.push('metering: skipped (needs wrk, the gateway and gateway-no-metering)')
    return []
  }
  const base = httpScenarios(ctx, bodies).find((s) => s.name === 'small-distinct')!
  const scenario = { ...base, connections: Math.max(1, Math.floor(opts.connections / 2)) }
  ctx.log(`metering: small-distinct, the metered and the unmetered gateway loaded at once (${scenario.connections} connections each)`)
  const load = (t: Target, s: number) => measure(t, set.stubPid, () => wrkLoad(wrk, t, scenario, s))
  if (opts.warmupS > 0) await Promise.all([load(metered, opts.warmupS), load(unmetered, opts.warmupS)])
  const samples = { metered: [] as Sample[], unmetered: [] as Sample[] }
  for (let r = 0; r < opts.rounds; r++) {
    const pair = r % 2 === 0 ? [metered, unmetered] : [unmetered, metered]
    const [a, b] = await Promise.all(pair.map((t) => load(t, opts.durationS)))
    const [m, u] = pair[0] === metered ? [a, b] : [b, a]
    samples.metered.push({ ...m, extra: { meteringCost: 1 - u.cpuUsPerReq / m.cpuUsPerReq } })
    samples.unmetered.push(u)
  }
  const costs = samples.metered.map((s) => s.extra!.meteringCost)
  ctx.log(`metering: per round ${costs.map((c) => `${(c * 100).toFixed(1)}%`).join(', ')}; median ${(median(costs) * 100).toFixed(1)}%`)
  return [summarise(METERING_ROWS, metered, samples.metered), summarise(METERING_ROWS, unmetered, samples.unmetered)]
}

/** The scenario name of its rows (report.ts reads the metered row's median `meteringCost`). */
export const METERING_ROWS = 'metering-small-distinct'
