import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus as cpuList, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { freePort } from '../../harness/free-port.js'
import { interleave, measure, summarise, type LoadFigures, type Row } from './measure.js'
import { checkTarget, httpScenarios, wrkLoad, type Bodies } from './http-scenarios.js'
import { cpuMs, runToEnd, startReady, type Started } from './processes.js'
import type { BenchContext } from './context.js'
import { compiledGateway, type Target } from './targets.js'
import { pin, whyNoPinning } from './cpu-pinning.js'

const ROOT = join(import.meta.dirname, '..', '..')
const CATALOG = join(ROOT, 'bench', 'targets', 'bench-plans.json')
/** The supervisor and each worker load the compiled sources and open LMDB: slow on a loaded machine. */
const START_TIMEOUT_MS = 120_000

/** `tollgate start` with `workers: N`, as an operator runs it. */
interface WorkersGateway {
  target: Target
  /** Each worker's admin listener (its /metrics), by worker index. */
  admins: string[]
  process: Started
  dataDir: string
}

/**
 * The `workers` scenario (issues 13 and 14): the real `tollgate start --config FILE` (from the
 * sources, with tsx) with `workers: N` for each count, on a fixed port, its node the stub, the bench
 * plan (never reached), a key made beforehand with `tollgate accounts create` in the embedded log
 * so that every worker projects it before it serves. The small-call load (wrk, as `small`), counts
 * interleaved between rounds. CPU per request is summed over the workers; the supervisor's is kept
 * apart (`extra.supervisorCpuUsPerReq`). With `--pin load` (the default where taskset exists) wrk
 * and the stub run on the last CPU, and the gateway's processes may use every CPU.
 */
export async function runWorkersScenario(ctx: BenchContext, bodies: Bodies): Promise<Row[]> {
  if (!ctx.wrk) {
    ctx.notes.push('workers: skipped, wrk is not installed (apt-get install -y wrk, or run bench/setup.sh)')
    return []
  }
  const wrk = ctx.wrk
  const stub = ctx.set.targets.get('stub')!
  const small = httpScenarios(ctx, bodies).find((s) => s.name === 'small')!
  const cores = cpuList().length
  const noPinning = whyNoPinning()
  const loadCpu = ctx.opts.pin === 'load' && noPinning === undefined ? String(cores - 1) : undefined
  if (ctx.opts.pin === 'load' && noPinning !== undefined) ctx.notes.push(`workers: nothing pinned (${noPinning})`)
  const loadAtStart = Math.round(loadavg()[0] * 100) / 100
  const pinned = loadCpu === undefined ? 'nothing pinned' : `wrk and the stub pinned to CPU ${loadCpu} (taskset), the gateway's processes on any CPU`
  const restoreStub = loadCpu === undefined ? undefined : await pin(ctx.set.stubPid, loadCpu)
  const gateways: WorkersGateway[] = []
  try {
    // The command line compiled by tsc, as bin/tollgate.js runs it (not through tsx: see compiledGateway).
    const main = join(await compiledGateway(), 'src', 'cli', 'main.js')
    // One at a time: each is several processes starting; together they would fight for the cores.
    for (const count of ctx.opts.workers) gateways.push(await startWorkers(main, count, stub))
    const targets: Target[] = []
    for (const g of gateways) {
      const bad = await checkTarget(g.target, small)
      if (bad) ctx.notes.push(`workers/${g.target.id}: skipped, wrong answer before measuring: ${bad}`)
      else targets.push(g.target)
    }
    ctx.log(`workers: eth_blockNumber as in small, tollgate start with workers ${ctx.opts.workers.join(', ')} on ${cores} cores, ${pinned}`)
    const load = (t: Target, durationS: number) => async (): Promise<LoadFigures> => {
      // The supervisor relays the workers' fleet messages: its cost, kept apart from the workers'.
      const supervisor0 = t.pids ? cpuMs(t.pid) : 0
      const figures = await wrkLoad(wrk, t, small, durationS, loadCpu)
      const supervisorMs = t.pids ? cpuMs(t.pid) - supervisor0 : 0
      const supervisorCpuUsPerReq = figures.requests > 0 ? Math.round((supervisorMs * 10_000) / figures.requests) / 10 : Number.NaN
      return { ...figures, extra: { workers: (t.pids ?? [t.pid]).length, cores, supervisorCpuUsPerReq } }
    }
    if (ctx.opts.warmupS > 0) for (const t of targets) await load(t, ctx.opts.warmupS)()
    const samples = await interleave(targets, ctx.opts.rounds, (t) => measure(t, ctx.set.stubPid, load(t, ctx.opts.durationS)))
    const rows: Row[] = []
    for (const g of gateways.filter((x) => targets.includes(x.target))) {
      const n = g.admins.length
      const split = await servedByWorker(g.admins)
      const gone = (g.target.pids ?? []).filter((pid) => !existsSync(`/proc/${pid}`))
      if (gone.length) {
        ctx.notes.push(`workers/${g.target.id}: worker pid ${gone.join(', ')} exited during the run (restarted by the supervisor); CPU reads NaN`)
      }
      const note =
        `${n} worker${n === 1 ? '' : 's'} of tollgate start on ${cores} cores, load average ${loadAtStart} at the scenario's start; ` +
        pinned +
        (n > 1 ? `; calls served by each worker: ${split.join(' / ')}` : '')
      rows.push(summarise('workers', g.target, samples.get(g.target.id)!, note))
    }
    if (cores - 1 < Math.max(...ctx.opts.workers)) {
      ctx.notes.push(
        `workers: ${cores} cores, short of one for wrk and the stub and one per worker: ` +
          'issue 14\'s ">= 1.5x with 2 workers" (where a core is free for them) is not judged here; the ratio is as measured',
      )
    }
    return rows
  } finally {
    await Promise.all(
      gateways.map(async (g) => {
        await g.process.stop()
        await rm(g.dataDir, { recursive: true, force: true })
      }),
    )
    await restoreStub?.()
  }
}

/** A fresh data folder with a key in its event log, then `tollgate start` with `workers: count` on a free port. */
async function startWorkers(main: string, count: number, stub: Target): Promise<WorkersGateway> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tollgate-bench-workers-'))
  try {
    const port = await freePort()
    const stubWs = stub.ws ?? stub.http.replace(/^http/, 'ws')
    const config = {
      workers: count,
      listen: { host: '127.0.0.1', port },
      // Port 0: each worker takes a free admin port (a fixed one is admin.listen.port + worker index).
      admin: { listen: { host: '127.0.0.1', port: 0 } },
      dataDir,
      shutdownMs: 3_000,
      networks: { 'eth-1': { chainId: 1, upstreams: [{ url: stub.http, ws: stubWs, kind: 'full', name: 'stub' }] } },
      plans: { catalog: CATALOG },
    }
    const configPath = join(dataDir, 'config.json')
    await writeFile(configPath, JSON.stringify(config, null, 2))
    const env = { TOLLGATE_SECRET: randomBytes(32).toString('hex'), LOG_LEVEL: 'info' }
    // Before the workers start: each projects the embedded log into its own folder before it serves.
    const wallet = `0x${randomBytes(20).toString('hex')}`
    const account = ['accounts', 'create', '--config', configPath, '--wallet', wallet, '--plan', 'bench']
    const made = await runToEnd(process.execPath, [main, ...account], env)
    const { apiKey } = JSON.parse(made.trim().split('\n').pop()!) as { apiKey: string }
    const workers = new Map<number, { pid: number; admin: string }>()
    const args = [main, 'start', '--config', configPath]
    const started = await startReady<Record<string, unknown>>(`workers-${count}`, process.execPath, args, {
      env,
      timeoutMs: START_TIMEOUT_MS,
      readyWhen: (line) => {
        // Each worker logs its own "ready" (with its pid and admin listener) before the supervisor's "all workers ready".
        const index = typeof line.worker === 'number' ? line.worker : 0
        if (line.msg === 'ready') workers.set(index, { pid: Number(line.pid), admin: String(line.admin) })
        return count === 1 ? line.msg === 'ready' : line.msg === 'all workers ready'
      },
    })
    const ordered = [...workers.entries()].sort(([a], [b]) => a - b).map(([, w]) => w)
    const target: Target = {
      id: `workers-${count}`,
      label: `tollgate start, workers: ${count}`,
      pid: started.pid,
      ...(count > 1 ? { pids: ordered.map((w) => w.pid) } : {}),
      http: `http://127.0.0.1:${port}/http/eth-1?apikey=${apiKey}`,
    }
    return { target, admins: ordered.map((w) => w.admin), process: started, dataDir }
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true })
    throw err
  }
}

/** The calls each worker answered (its tollgate_http_responses_total, from its admin listener), or "?" if it did not say. */
async function servedByWorker(admins: string[]): Promise<string[]> {
  return Promise.all(
    admins.map(async (admin) => {
      try {
        const text = await (await fetch(`${admin}/metrics`)).text()
        const lines = text.split('\n').filter((l) => l.startsWith('tollgate_http_responses_total'))
        return String(lines.reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0))
      } catch {
        return '?'
      }
    }),
  )
}
