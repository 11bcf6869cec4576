/**
 * Paired before/after: this tree's gateway and another commit's, loaded AT ONCE (each with its own
 * load generator, one stub for both), round after round, the CPU per request of each from /proc.
 * Where one gateway after the other (`npm run bench -- --baseline REF`) compares moments of a
 * shared machine that drift by ±10–15%, both here meet the same moment; the ratio of each round is
 * what counts. The gateway started second did better on this machine whichever build it was, so
 * the whole run is done twice, in both start orders, and each order's median is reported.
 *
 * Run: npm run bench:paired -- --baseline REF [--only distinct|small|batch-distinct|calls|ws] [--rounds 6] [--duration 6] [--results NAME]
 * Prints one line per round and the medians; writes bench/results/<NAME>.json (default paired-<scenario>:
 * a run to try something names its own file, so that the committed figures are not overwritten).
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { compiledGateway, startGatewayTarget, type Target } from './lib/targets.js'
import { cpuMs, startNodeScript, type Started } from './lib/processes.js'
import { findWrk, runWrk } from './lib/wrk.js'
import { requestBodies, wsLoad } from './lib/http-scenarios.js'
import { median } from './lib/measure.js'

const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    only: { type: 'string', default: 'distinct' },
    rounds: { type: 'string', default: '6' },
    duration: { type: 'string', default: '6' },
    results: { type: 'string' },
  },
})
const SCENARIOS = ['distinct', 'small', 'batch-distinct', 'calls', 'ws'] as const
type Scenario = (typeof SCENARIOS)[number]
const scenario = values.only as Scenario
if (values.baseline === undefined || !SCENARIOS.includes(scenario)) {
  process.stderr.write(`usage: npm run bench:paired -- --baseline REF [--only ${SCENARIOS.join('|')}] [--rounds N] [--duration S] [--results NAME]\n`)
  process.exit(2)
}
const baseline = values.baseline
const rounds = Number(values.rounds)
const durationS = Number(values.duration)
const wrk = findWrk()
if (scenario !== 'ws' && wrk === undefined) throw new Error('bench:paired needs wrk (apt-get install -y wrk)')

const BENCH = import.meta.dirname
const bodies = requestBodies(mkdtempSync(join(tmpdir(), 'tollgate-paired-')))
const log = (line: string): void => void process.stdout.write(`[paired] ${line}\n`)

/** The body each wrk scenario checks before measuring, and the script that makes the bodies it sends. */
const BODY_OF: Record<Scenario, string> = {
  small: bodies.small,
  distinct: bodies.distinct,
  'batch-distinct': bodies.batchDistinct,
  calls: bodies.callsDistinct,
  ws: bodies.small,
}
const SCRIPT_OF = { small: 'post', distinct: 'distinct', 'batch-distinct': 'batch-distinct', calls: 'calls-distinct', ws: 'post' } as const

/** One load of `seconds` on a gateway: requests, and its CPU per request over that time. */
async function load(g: Target, seconds: number): Promise<{ requests: number; rps: number; cpuUs: number }> {
  const cpu0 = cpuMs(g.pid)
  const body = BODY_OF[scenario]
  const connections = scenario === 'batch-distinct' ? 16 : 50
  const { requests, rps } =
    scenario === 'ws'
      ? await wsLoad(g.ws!, seconds)
      : await runWrk(wrk!, { url: g.http, bodyFile: body, durationS: seconds, connections, script: SCRIPT_OF[scenario] })
  return { requests, rps, cpuUs: ((cpuMs(g.pid) - cpu0) * 1000) / requests }
}

/** Both gateways started in this order, loaded at once for each round: the ratio after / before of each round. */
async function runOrder(order: Array<'before' | 'after'>): Promise<{ ratios: number[]; rpsRatios: number[] }> {
  const stub = await startNodeScript<{ port: number }>('stub', join(BENCH, 'stub', 'stub-upstream.ts'), 0)
  const started: Started[] = [stub]
  try {
    const catalog = join(BENCH, 'targets', 'bench-plans.json')
    const stubHttp = `http://127.0.0.1:${stub.info.port}/`
    const stubWs = `ws://127.0.0.1:${stub.info.port}/`
    const gateways = new Map<'before' | 'after', Target>()
    for (const which of order) {
      const srcRoot = await compiledGateway(which === 'before' ? baseline : undefined)
      const label = which === 'before' ? `Tollgate at ${baseline}` : 'Tollgate, this tree'
      const { process: p, target } = await startGatewayTarget(which, label, { stubHttp, stubWs, catalog, srcRoot })
      started.push(p)
      gateways.set(which, target)
    }
    const inOrder = order.map((w) => gateways.get(w)!)
    await Promise.all(inOrder.map((g) => load(g, 2))) // warm-up
    const ratios: number[] = []
    const rpsRatios: number[] = []
    for (let r = 0; r < rounds; r++) {
      const figures = await Promise.all(inOrder.map((g) => load(g, durationS)))
      const by = new Map(order.map((w, i) => [w, figures[i]]))
      const before = by.get('before')!
      const after = by.get('after')!
      ratios.push(after.cpuUs / before.cpuUs)
      rpsRatios.push(after.rps / before.rps)
      log(
        `${order.join(' started, then ')} started; round ${r + 1}: CPU ${before.cpuUs.toFixed(1)} -> ${after.cpuUs.toFixed(1)} us/req (${(after.cpuUs / before.cpuUs).toFixed(3)}x), ` +
          `${before.rps} -> ${after.rps} req/s`,
      )
    }
    return { ratios, rpsRatios }
  } finally {
    await Promise.all(started.map((p) => p.stop()))
  }
}

log(`${scenario}: ${baseline} (before) and this tree (after), loaded at once, ${rounds} rounds of ${durationS} s, in both start orders`)
const first = await runOrder(['before', 'after'])
const second = await runOrder(['after', 'before'])
const summary = {
  scenario,
  baseline,
  rounds,
  durationS,
  cpuRatio: { afterStartedSecond: median(first.ratios), afterStartedFirst: median(second.ratios) },
  rpsRatio: { afterStartedSecond: median(first.rpsRatios), afterStartedFirst: median(second.rpsRatios) },
  perRound: { afterStartedSecond: first, afterStartedFirst: second },
}
log(
  `CPU per request after / before, medians of the rounds: ${summary.cpuRatio.afterStartedSecond.toFixed(3)}x (this tree started second), ` +
    `${summary.cpuRatio.afterStartedFirst.toFixed(3)}x (started first); req/s ${summary.rpsRatio.afterStartedSecond.toFixed(3)}x, ${summary.rpsRatio.afterStartedFirst.toFixed(3)}x`,
)
const out = join(BENCH, 'results', `${values.results ?? `paired-${scenario}`}.json`)
writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`)
log(`written ${out}`)
process.exit(0)
