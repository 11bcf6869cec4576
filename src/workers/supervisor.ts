import { fork, type ChildProcess } from 'node:child_process'
import type { Logger } from 'pino'
import { isFleetIpcMessage } from '../fleet/ipc-bus.js'

/** What a worker tells its supervisor once it serves. */
export interface WorkerReady {
  type: 'ready'
  http: string
  ws: string
  admin: string
}

export interface SupervisorOptions {
  /** Worker processes to run. */
  count: number
  /** The command line that runs one worker (this program's `start --config FILE`). */
  args: string[]
  logger: Logger
  /** A worker's own graceful stop; past it plus a grace, it is killed. */
  shutdownMs: number
  /** First pause before a crashed worker is started again; doubled while it keeps crashing. */
  restartDelayMs?: number
}

/** A worker that ran at least this long before it exited was not crash-looping. */
const STABLE_MS = 10_000
const MAX_RESTART_DELAY_MS = 30_000
const KILL_GRACE_MS = 5_000

interface Slot {
  index: number
  child: ChildProcess | undefined
  startedAt: number
  delayMs: number
  ready: WorkerReady | undefined
  timer: NodeJS.Timeout | undefined
}

/**
 * `tollgate start` with `workers` > 1: runs that many gateway processes on the one port (uWS
 * opens it with SO_REUSEPORT; Linux spreads new connections over them), hands the fleet's
 * messages from each worker to the others (their shared limits, when there is no NATS), and
 * starts a worker again when it dies, logging why. Workers run in their own process group: a
 * Ctrl-C reaches the supervisor only, which stops them one by one gracefully; a worker whose
 * supervisor is gone stops by itself (see src/cli/commands/start.ts).
 */
export class Supervisor {
  readonly #opts: SupervisorOptions
  readonly #slots: Slot[]
  #stopping = false
  #allReady: (() => void) | undefined

  constructor(opts: SupervisorOptions) {
    this.#opts = opts
    const base = opts.restartDelayMs ?? 1_000
    this.#slots = Array.from({ length: opts.count }, (_, index) => ({
      index,
      child: undefined,
      startedAt: 0,
      delayMs: base,
      ready: undefined,
      timer: undefined,
    }))
  }

  /** Start every worker; resolves with the first worker's addresses once all of them serve. */
  async start(): Promise<WorkerReady> {
    const ready = new Promise<void>((resolve) => (this.#allReady = resolve))
    for (const slot of this.#slots) this.#spawn(slot)
    await ready
    return this.#slots[0]!.ready!
  }

  /** Workers alive now. */
  get alive(): number {
    return this.#slots.filter((s) => s.child !== undefined).length
  }

  /**
   * Pass a reload on: SIGHUP to every live worker, each of which reads the config file again and
   * applies it or refuses it (and logs which). Returns how many were told. Workers run in their
   * own process group, so a SIGHUP to the supervisor reaches them only this way.
   */
  reload(): number {
    if (this.#stopping) return 0
    let told = 0
    for (const slot of this.#slots) if (slot.child?.kill('SIGHUP') === true) told++
    return told
  }

  /** SIGTERM to every worker (each drains), and wait for them; past the grace, SIGKILL. */
  async stop(): Promise<void> {
    this.#stopping = true
    const exits = this.#slots.map((slot) => {
      clearTimeout(slot.timer)
      const child = slot.child
      if (child === undefined) return Promise.resolve()
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
      child.kill('SIGTERM')
      const killer = setTimeout(() => child.kill('SIGKILL'), this.#opts.shutdownMs + KILL_GRACE_MS)
      return exited.finally(() => clearTimeout(killer))
    })
    await Promise.all(exits)
  }

  #spawn(slot: Slot): void {
    const [script, ...args] = this.#opts.args
    const child = fork(script!, args, {
      execArgv: process.execArgv,
      env: { ...process.env, TOLLGATE_WORKER: String(slot.index) },
      serialization: 'advanced',
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    slot.child = child
    slot.startedAt = Date.now()
    slot.ready = undefined
    // A worker that has just died may still look connected until its 'disconnect' is handled:
    // a send to it then fails with EPIPE, emitted as 'error' on the ChildProcess, which without
    // a listener ended the supervisor and every worker with it. Its 'exit' restarts it.
    child.on('error', (err) => this.#opts.logger.warn({ worker: slot.index, pid: child.pid, err: err.message }, 'a worker could not be reached'))
    child.on('message', (m: unknown) => {
      if (isFleetIpcMessage(m)) {
        for (const other of this.#slots) if (other !== slot && other.child?.connected) other.child.send(m, ignoreSendError)
      } else if (typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'ready') {
        slot.ready = m as WorkerReady
        if (this.#slots.every((s) => s.ready !== undefined)) this.#allReady?.()
      }
    })
    child.once('exit', (code, signal) => {
      slot.child = undefined
      if (this.#stopping) return
      const ranMs = Date.now() - slot.startedAt
      slot.delayMs = ranMs >= STABLE_MS ? (this.#opts.restartDelayMs ?? 1_000) : Math.min(slot.delayMs * 2, MAX_RESTART_DELAY_MS)
      this.#opts.logger.error({ worker: slot.index, pid: child.pid, code, signal, ranMs, restartInMs: slot.delayMs }, 'a worker exited: starting it again')
      slot.timer = setTimeout(() => this.#spawn(slot), slot.delayMs)
    })
  }
}

/**
 * A fleet message that did not reach a worker is lost as one over NATS would be: the next sync
 * (fleet.syncMs) carries the same figures. The worker's death is handled by its 'exit'.
 */
function ignoreSendError(_err: Error | null): void {}
