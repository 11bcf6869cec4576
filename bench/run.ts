/**
 * `npm run bench`: Tollgate against nginx and a plain Node proxy, in the same run, on the same
 * machine, every target in its own process and the load from another (wrk, or bench/load/ for
 * open-loop and WebSocket load). See bench/README.md for what each scenario measures and the
 * latest figures. Prints a table; writes bench/results/latest.json (or NAME.json with --results NAME).
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseBenchOptions } from './lib/options.js'
import { startTargets } from './lib/targets.js'
import { findWrk, runWrk } from './lib/wrk.js'
import { httpScenarios, requestBodies, runHttpScenario, runWsScenario, wsLoad } from './lib/http-scenarios.js'
import { runFixedRate, runGzipIsolation } from './lib/latency-scenarios.js'
import { runEventLog } from './lib/event-log-scenario.js'
import { runWorkersScenario } from './lib/workers-scenario.js'
import { runSlowlorisScenario } from './lib/slowloris-scenario.js'
import { runPinnedLatency } from './lib/pinned-latency-scenario.js'
import { runMeteringScenario } from './lib/metering-scenario.js'
import { computeRatios, formatMarkdown, formatTable } from './lib/report.js'
import { runToEnd } from './lib/processes.js'
import { machine } from './lib/machine.js'
import { formatProfile, summariseProfile } from './lib/cpu-profile.js'
import type { BenchContext } from './lib/context.js'
import type { Row } from './lib/measure.js'

const opts = parseBenchOptions(process.argv.slice(2))
const RESULTS = join(import.meta.dirname, 'results')
mkdirSync(RESULTS, { recursive: true })
const log = (line: string): void => void process.stderr.write(`[bench] ${line}\n`)
const tmp = mkdtempSync(join(tmpdir(), 'tollgate-bench-'))
const bodies = requestBodies(tmp)
const wrk = findWrk()

/** `--profile`: the gateway under --cpu-prof, one scenario's load (small calls by default), top costs. */
async function profile(): Promise<void> {
  if (!wrk) throw new Error('--profile needs wrk (apt-get install -y wrk)')
  const dir = join(RESULTS, 'profile')
  rmSync(dir, { recursive: true, force: true })
  const set = await startTargets({ which: 'gateway-only', gatewayNodeFlags: ['--cpu-prof', '--cpu-prof-dir', dir] })
  const gw = set.targets.get('gateway')!
  // --only picks what to profile: small (default), small-distinct, large, large-gzip, batch, batch-distinct or ws.
  const scenario = opts.only?.[0] ?? 'small'
  const body =
    scenario === 'batch' ? bodies.batch : scenario === 'batch-distinct' ? bodies.batchDistinct : scenario.startsWith('large') ? bodies.large : bodies.small
  const headers = scenario === 'large-gzip' ? { 'Accept-Encoding': 'gzip' } : undefined
  const connections = scenario.startsWith('large') ? 16 : opts.connections
  const script = scenario === 'small-distinct' ? ('distinct' as const) : scenario === 'batch-distinct' ? ('batch-distinct' as const) : undefined
  // ws: the WebSocket scenario's load (16 sockets, 4 calls in flight each) from its own process.
  const load = (durationS: number) =>
    scenario === 'ws' ? wsLoad(gw.ws!, durationS) : runWrk(wrk, { url: gw.http, bodyFile: body, durationS, connections, headers, script })
  try {
    log(`profile: ${scenario} on the gateway for ${opts.durationS} s (after ${opts.warmupS} s of warm-up)`)
    if (opts.warmupS > 0) await load(opts.warmupS)
    const r = await load(opts.durationS)
    log(`profile: ${r.rps} req/s under the profiler`)
  } finally {
    await set.stopAll()
  }
  // Node writes one profile per thread; the main thread's is the largest (the loader thread idles).
  const files = (await runToEnd('bash', ['-c', `ls -S '${dir}'/*.cpuprofile`])).trim().split('\n')
  const summary = summariseProfile(files[0], 30)
  const text = formatProfile(summary)
  writeFileSync(join(RESULTS, `profile-${scenario}.txt`), text + '\n')
  process.stdout.write(text + '\n')
  log(`profile: ${files[0]} (open it in Chrome DevTools for the call tree); summary in bench/results/profile-${scenario}.txt`)
}

async function compare(): Promise<void> {
  const info = await machine(wrk)
  log(`machine: ${info.nproc} × ${info.cpu}, load ${JSON.stringify(info.loadavgAtStart)}, commit ${info.commit}${info.dirty ? ' (uncommitted changes)' : ''}`)
  // `--workers` asks for the workers scenario beside what --only names (issue 13: --only small --workers 1,2).
  const wanted = (name: string): boolean => !opts.only || opts.only.includes(name) || (name === 'workers' && opts.workersAsked)
  const onlyWorkers = opts.only?.every((name) => name === 'workers')
  // The slowloris and pinned-latency scenarios alone need only the gateway and nginx: idle targets beside them would only take memory and timers.
  const onlyGatewayAndNginx = opts.only?.every((name) => name === 'slowloris' || name === 'pinned-latency')
  const which = onlyWorkers ? 'stub-only' : onlyGatewayAndNginx ? 'gateway-and-nginx' : opts.quick ? 'quick' : 'all'
  log(onlyWorkers ? 'starting the stub…' : 'starting the stub and the targets, each in its own process…')
  const set = await startTargets({ baseline: opts.baseline, which })
  const ctx: BenchContext = { opts, set, wrk, notes: [...set.notes], log }
  if (!wrk) ctx.notes.push('wrk is not installed: the closed-loop HTTP scenarios are skipped (apt-get install -y wrk, or run bench/setup.sh)')
  const rows: Row[] = []
  const started = Date.now()
  // A scenario that fails is a note in the results, not the end of a 15-minute run.
  const attempt = async (name: string, run: () => Promise<Row[]>): Promise<void> => {
    if (!wanted(name)) return
    try {
      rows.push(...(await run()))
    } catch (err) {
      ctx.notes.push(`${name}: failed: ${(err as Error).message.split('\n').slice(0, 3).join(' ').slice(0, 300)}`)
      log(`${name} failed; going on`)
    }
  }
  try {
    for (const s of httpScenarios(ctx, bodies)) await attempt(s.name, () => runHttpScenario(ctx, s))
    await attempt('metering', () => runMeteringScenario(ctx, bodies))
    await attempt('workers', () => runWorkersScenario(ctx, bodies))
    await attempt('ws', () => runWsScenario(ctx))
    await attempt('fixed-rate', async () => {
      let max = rows.find((r) => r.scenario === 'small' && r.target === 'gateway')?.rps
      if (max === undefined && wrk) {
        max = (await runWrk(wrk, { url: set.targets.get('gateway')!.http, bodyFile: bodies.small, durationS: opts.durationS, connections: opts.connections }))
          .rps
      }
      return max ? runFixedRate(ctx, bodies.small, max) : []
    })
    await attempt('pinned-latency', () => runPinnedLatency(ctx, bodies))
    await attempt('gzip-isolation', () => runGzipIsolation(ctx, bodies))
    await attempt('slowloris', () => runSlowlorisScenario(ctx, bodies.small))
    await attempt('event-log', () => runEventLog(ctx))
  } finally {
    await set.stopAll()
    rmSync(tmp, { recursive: true, force: true })
  }
  const ratios = computeRatios(rows, opts.baseline)
  process.stdout.write(formatTable(rows, ratios, ctx.notes) + '\n')
  const result = {
    machine: { ...info, loadavgAtEnd: loadavg().map((x) => Math.round(x * 100) / 100) },
    options: opts,
    elapsedS: Math.round((Date.now() - started) / 1000),
    targets: [...set.targets.values()].map((t) => ({ id: t.id, label: t.label })),
    rows,
    ratios,
    notes: ctx.notes,
  }
  writeFileSync(join(RESULTS, `${opts.results}.json`), JSON.stringify(result, null, 2) + '\n')
  const markdown = formatMarkdown(result)
  writeFileSync(join(RESULTS, `${opts.results}.md`), markdown + '\n')
  if (opts.updateReadme) {
    // The figures section of bench/README.md is this run's, as measured: never edited by hand.
    const path = join(import.meta.dirname, 'README.md')
    const readme = readFileSync(path, 'utf8')
    const begin = '<!-- bench:latest:start -->'
    const end = '<!-- bench:latest:end -->'
    const a = readme.indexOf(begin)
    const b = readme.indexOf(end)
    if (a < 0 || b < a) throw new Error(`bench/README.md has no ${begin} … ${end} section`)
    writeFileSync(path, readme.slice(0, a + begin.length) + '\n' + markdown + '\n' + readme.slice(b))
  }
  const written = `bench/results/${opts.results}.json and ${opts.results}.md written`
  log(`done in ${result.elapsedS} s; ${written}${opts.updateReadme ? ', bench/README.md updated' : ''}`)
}

try {
  if (opts.profile) await profile()
  else await compare()
  process.exit(0)
} catch (err) {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`)
  process.exit(1)
}
