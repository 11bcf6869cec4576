/**
 * Paired before/after: this tree's gateway and another commit's, loaded AT ONCE (each with its own
 * load generator, one stub for both), round after round, the CPU per request of each from /proc.
 * Where one gateway after the other (`npm run bench -- --baseline REF`) compares moments of a
 * shared machine that drift by ±10–15%, both here meet the same moment; the ratio of each round is
 * what counts. The gateway started second did better on this machine whichever build it was, so
 * the whole run is done twice, in both start orders, and each order's median is reported.
 *
 * Every process of the run (the two gateways, the load generators, the stub) is put on ONE CPU
 * (`--cpu`, the last by default; `--cpu none` leaves them where the kernel puts them). Spread over
 * both cores of this machine, the order effect was as large as what was looked for (batches of
 * distinct calls, one pair of builds: 1.27x in one order, 0.94x in the other); on one CPU the same
 * pair gave 0.95x and 0.97x, every round of both orders the same way. Both gateways then meet the
 * same core as well as the same moment; what the other core runs (a test suite) touches them alike.
 * A pair of processes still keeps its lead over all its rounds (one pair of the same two builds at
 * 1.03x, the next at 0.80x), so `--pairs K` starts K pairs, the orders in turn, and the median of
 * the pairs' medians is the figure; rounds steady a pair, pairs steady the ratio.
 *
 * Run: npm run bench:paired -- --baseline REF [--only distinct|small|batch-distinct|calls|ws] [--rounds 6] [--duration 6] [--cpu N|last|none] [--pairs K] [--results NAME]
 * Prints one line per round and the medians; writes bench/results/<NAME>.json (default paired-<scenario>:
 * a run to try something names its own file, so that the committed figures are not overwritten).
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { compiledGateway, startGatewayTarget, type Target } from './lib/targets.js'
import { cpuMs, startNodeScript, type Started } from './lib/processes.js'
import { pin, TASKSET } from './lib/cpu-pinning.js'
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
    cpu: { type: 'string', default: 'last' },
    pairs: { type: 'string', default: '2' },
  },
})
const SCENARIOS = ['distinct', 'small', 'batch-distinct', 'calls', 'ws'] as const
type Scenario = (typeof SCENARIOS)[number]
const scenario = values.only as Scenario
if (values.baseline === undefined || !SCENARIOS.includes(scenario)) {
  process.stderr.write(
    `usage: npm run bench:paired -- --baseline REF [--only ${SCENARIOS.join('|')}] [--rounds N] [--duration S] [--cpu N|last|none] [--pairs K] [--results NAME]\n`,
  )
  process.exit(2)
}
const baseline = values.baseline
const rounds = Number(values.rounds)
const durationS = Number(values.duration)
const pairs = Math.max(2, Number(values.pairs))
const wrk = findWrk()
if (scenario !== 'ws' && wrk === undefined) throw new Error('bench:paired needs wrk (apt-get install -y wrk)')

// One CPU for every process of the run: this one's threads, and the children it starts inherit it.
const cpu = values.cpu === 'none' || !existsSync(TASKSET) ? undefined : values.cpu === 'last' ? String(cpus().length - 1) : values.cpu
if (cpu !== undefined) await pin(process.pid, cpu)

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

log(
  `${scenario}: ${baseline} (before) and this tree (after), loaded at once, ${pairs} pairs of processes (start orders in turn) of ${rounds} rounds of ${durationS} s, ` +
    (cpu === undefined ? 'on every CPU' : `every process on CPU ${cpu}`),
)
// Pairs of processes in turn, each order as often: a pair keeps its own lead for all its rounds
// (one pair gave 1.03x every round, the next 0.80x, the same two builds), so the pairs are what
// is averaged; the rounds within a pair only steady its figure.
type Order = { ratios: number[]; rpsRatios: number[] }
const byOrder: { afterStartedSecond: Order[]; afterStartedFirst: Order[] } = { afterStartedSecond: [], afterStartedFirst: [] }
const pairMedians: number[] = []
for (let k = 0; k < pairs; k++) {
  const second = k % 2 === 0
  const run = await runOrder(second ? ['before', 'after'] : ['after', 'before'])
  byOrder[second ? 'afterStartedSecond' : 'afterStartedFirst'].push(run)
  pairMedians.push(median(run.ratios))
  log(`pair ${k + 1} of ${pairs}: ${median(run.ratios).toFixed(3)}x (this tree started ${second ? 'second' : 'first'})`)
}
const all = (runs: Order[], f: (o: Order) => number[]): number[] => runs.flatMap(f)
const summary = {
  scenario,
  baseline,
  rounds,
  durationS,
  pairs,
  cpu: cpu ?? 'any',
  cpuRatio: {
    medianOfPairs: median(pairMedians),
    afterStartedSecond: median(all(byOrder.afterStartedSecond, (o) => o.ratios)),
    afterStartedFirst: median(all(byOrder.afterStartedFirst, (o) => o.ratios)),
  },
  rpsRatio: {
    afterStartedSecond: median(all(byOrder.afterStartedSecond, (o) => o.rpsRatios)),
    afterStartedFirst: median(all(byOrder.afterStartedFirst, (o) => o.rpsRatios)),
  },
  pairMedians,
  perRound: byOrder,
}
log(
  `CPU per request after / before: ${summary.cpuRatio.medianOfPairs.toFixed(3)}x, the median of ${pairs} pairs (${pairMedians.map((m) => m.toFixed(3)).join(', ')}); ` +
    `medians of the rounds by order ${summary.cpuRatio.afterStartedSecond.toFixed(3)}x (this tree started second), ` +
    `${summary.cpuRatio.afterStartedFirst.toFixed(3)}x (started first); req/s ${summary.rpsRatio.afterStartedSecond.toFixed(3)}x, ${summary.rpsRatio.afterStartedFirst.toFixed(3)}x`,
)
const out = join(BENCH, 'results', `${values.results ?? `paired-${scenario}`}.json`)
writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`)
log(`written ${out}`)
process.exit(0)
