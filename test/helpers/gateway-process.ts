import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { randomBytes } from 'node:crypto'
import { TEST_SECRET } from './gateway.js'
import { freePort, freePortRange } from '../../harness/free-port.js'
import { builtMain } from './built.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/**
 * Longest wait for the "ready" line: loading the gateway takes about 0.9 s of CPU on these cores,
 * much more when several processes start at once on a loaded machine (three at once, under tsx,
 * missed 60 s with a load average of 25 on the 2 cores).
 */
const READY_TIMEOUT_MS = 180_000

/**
 * Gateways still running: killed by their PIDs when this process exits, however it exits (an
 * error outside any teardown, a script's process.exit), so that none outlives the test or the
 * benchmark that started it.
 */
const live = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of live) {
    try {
      process.kill(child.pid!, 'SIGKILL')
    } catch {
      // already gone
    }
  }
})

/** `tollgate start` running as a child process, as an operator runs it. */
export interface GatewayProcess {
  readonly pid: number
  /** Base URLs from its "ready" log line. */
  readonly http: string
  readonly ws: string
  /** The admin listener (/metrics). */
  readonly admin: string
  readonly configPath: string
  readonly dataDir: string
  /** Every pino line it printed so far, parsed. */
  readonly logs: Array<Record<string, any>>
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** POST URL of a network. */
  url(network: string): string
  signal(signal: NodeJS.Signals): void
  /** SIGKILL, and wait for the exit. */
  kill(): Promise<void>
  /** Resolves with the first log line (already printed or to come) that `match` accepts. */
  waitForLog(match: (line: Record<string, any>) => boolean, withinMs?: number): Promise<Record<string, any>>
}

export interface GatewayProcessOptions {
  /** The config file's content; `dataDir` defaults to a new temporary folder, `listen` and `admin.listen` to free ports. */
  config: Record<string, unknown>
  env?: Record<string, string>
  /** Options of node itself, before the program (e.g. `--inspect=127.0.0.1:PORT`). */
  nodeArgs?: string[]
}

/**
 * Start `tollgate start --config FILE` (built from the sources: see built.ts) and resolve once it logs "ready".
 * The child is SIGKILLed at teardown if it is still running; its own data folder is removed.
 * @example
 * const gw = await startGatewayProcess(t, { config: { networks } }); gw.signal('SIGTERM'); await gw.exited
 */
export async function startGatewayProcess(t: { teardown(fn: () => unknown): void }, opts: GatewayProcessOptions): Promise<GatewayProcess> {
  const ownDir = opts.config.dataDir === undefined
  const dataDir = (opts.config.dataDir as string | undefined) ?? (await mkdtemp(join(tmpdir(), 'tollgate-proc-')))
  const config = { listen: { host: '127.0.0.1', port: 0 }, admin: { listen: { host: '127.0.0.1', port: 0 } }, ...opts.config, dataDir }
  const configPath = join(dataDir, `config-${Date.now()}.json`)
  await writeFile(configPath, JSON.stringify(config, null, 2))
  const child: ChildProcess = spawn(process.execPath, [...(opts.nodeArgs ?? []), await builtMain(), 'start', '--config', configPath], {
    cwd: ROOT,
    env: { ...process.env, TOLLGATE_SECRET: TEST_SECRET, LOG_LEVEL: 'info', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  live.add(child)
  child.once('exit', () => live.delete(child))
  const logs: Array<Record<string, any>> = []
  const watchers = new Set<() => void>()
  let stderr = ''
  let partial = ''
  child.stdout!.on('data', (d: Buffer) => {
    partial += d.toString()
    const lines = partial.split('\n')
    partial = lines.pop()!
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line))
      } catch {
        logs.push({ msg: line })
      }
    }
    for (const w of watchers) w()
  })
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      for (const w of watchers) w()
      resolve({ code, signal })
    }),
  )
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL')
      await exited
    }
    if (ownDir) await rm(dataDir, { recursive: true, force: true, maxRetries: 5 })
  })

  const waitForLog = (match: (line: Record<string, any>) => boolean, withinMs = READY_TIMEOUT_MS): Promise<Record<string, any>> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const found = logs.find(match)
        if (found) return done(() => resolve(found))
        if (child.exitCode !== null || child.signalCode !== null) {
          done(() => reject(new Error(`the gateway exited (${child.exitCode ?? child.signalCode}) before the log line; stderr: ${stderr.slice(-2000)}`)))
        }
      }
      const timer = setTimeout(() => done(() => reject(new Error(`no such log line within ${withinMs} ms; stderr: ${stderr.slice(-2000)}`))), withinMs)
      const done = (then: () => void): void => {
        clearTimeout(timer)
        watchers.delete(check)
        then()
      }
      watchers.add(check)
      check()
    })

  const ready = await waitForLog((l) => l.msg === 'ready')
  return {
    pid: child.pid!,
    http: ready.http,
    ws: ready.ws,
    admin: ready.admin,
    configPath,
    dataDir,
    logs,
    exited,
    url: (network) => `${ready.http}/http/${network}`,
    signal: (signal) => void child.kill(signal),
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
    waitForLog,
  }
}

/**
 * The config of a gateway that restarts on its own data folder and port, on a NATS stream of its
 * own: what the lifecycle tests restart and kill. The folder is removed at teardown.
 */
export async function restartableConfig(
  t: { teardown(fn: () => unknown): void },
  opts: { natsUrl: string; nodeUrl: string; usageIntervalMs: number; extra?: Record<string, unknown> },
): Promise<Record<string, unknown>> {
  const dataDir = await mkdtemp(join(tmpdir(), 'tollgate-restart-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true, maxRetries: 5 }))
  return {
    dataDir,
    listen: { host: '127.0.0.1', port: await freePort() },
    events: { nats: opts.natsUrl, stream: `T${randomBytes(4).toString('hex')}` },
    networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: opts.nodeUrl, kind: 'full' }] } },
    usage: { intervalMs: opts.usageIntervalMs },
    ...opts.extra,
  }
}

/** A supervisor and its workers, on the ports it was given. */
export interface WorkersGateway {
  gateway: GatewayProcess
  /** The port the workers share. */
  port: number
  /** admin.listen.port: worker i has its admin listener on adminPort + i. */
  adminPort: number
}

/**
 * `tollgate start` with `workers` in the config, on a free port and a free admin port given in the
 * config (the workers' admin listeners are admin.listen.port + their index, so port 0 would not do);
 * resolves once the supervisor logs "all workers ready". Torn down as startGatewayProcess's.
 * @example
 * const { gateway, port, adminPort } = await startWorkersGateway(t, { workers: 2, config: { networks } })
 */
export async function startWorkersGateway(
  t: { teardown(fn: () => unknown): void },
  opts: { workers: number; config: Record<string, unknown>; host?: string },
): Promise<WorkersGateway> {
  const host = opts.host ?? '127.0.0.1'
  // The ports are free when chosen, and may be taken before the workers bind them (another file's
  // processes run beside this one; seen once: a worker's admin port). The gateway then refuses to
  // start and names the port; it is started again on other ports, at most three times.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const adminPort = await freePortRange(opts.workers)
    try {
      const gateway = await startGatewayProcess(t, {
        config: { ...opts.config, workers: opts.workers, listen: { host, port }, admin: { listen: { host, port: adminPort } } },
      })
      await gateway.waitForLog((l) => l.msg === 'all workers ready')
      return { gateway, port, adminPort }
    } catch (err) {
      if (attempt >= 3 || !/PortUnavailableError/.test((err as Error).message)) throw err
    }
  }
}

/**
 * Start a gateway that is expected to refuse to start; resolves with why: the start's error, which
 * carries the exit code and the end of its stderr ("the gateway exited (1) before the log line; stderr: …").
 * It never rejects, so that a start begun before the subtest that checks it cannot fail the file
 * alone. One that started instead resolves with "it started (pid …) …" (what the caller's checks
 * then fail on) and runs until teardown, killed by its pid.
 * @example
 * const why = await refusedStart(t, { config: { networks, dataDir: live.dataDir } })
 * t.match(why, /the gateway exited \(1\)/)
 */
export async function refusedStart(t: { teardown(fn: () => unknown): void }, opts: GatewayProcessOptions): Promise<string> {
  return startGatewayProcess(t, opts).then(
    (gw) => `it started (pid ${gw.pid}) on ${gw.http}, admin ${gw.admin}`,
    (err: Error) => err.message,
  )
}
