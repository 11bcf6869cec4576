import { Worker } from 'node:worker_threads'
import type { RunOutcome, RunRequest } from './evm-run.js'
import { runOnSnapshot } from './evm-run.js'
import { EvmRunTimeout } from './errors.js'

/** Where the gateway's EVM runs: a pool of worker threads, or inline (a bench's baseline). */
export interface EvmRunner {
  run(request: RunRequest): Promise<RunOutcome>
  /** Have the runner ready before the first run (threads loaded). */
  warm(): void
  close(): Promise<void>
}

export interface EvmWorkersOptions {
  /** Threads (evm.workers). */
  size: number
  /** Wall-clock budget of one run, from when a thread takes it (evm.timeoutMs). */
  timeoutMs: number
}

/** The thread's module beside this one, as built (a thread does not take tsx's loader: benches use the build). */
const WORKER = new URL('./evm-worker.js', import.meta.url)

type Reply = { ok: true; outcome: RunOutcome } | { ok: false; error: string }

interface Job {
  request: RunRequest
  resolve: (outcome: RunOutcome) => void
  reject: (err: Error) => void
}

/**
 * The gateway's EVM off the event loop: a run on proven state (a tenant's endless loop of 50M gas
 * is seconds of CPU) goes to one of `size` worker threads, so that other tenants' calls are
 * answered meanwhile. A run still going after `timeoutMs` is stopped by ending its thread (a
 * thread deep in the EVM cannot be asked to stop), which is replaced; the caller gets
 * EvmRunTimeout. Runs wait for a free thread in order. Threads start at the first run (or all at
 * once: warm) and never keep the process alive.
 * @example
 * const evm = new EvmWorkers({ size: 2, timeoutMs: 5000 })
 * const outcome = await evm.run({ snapshot, job: { type: 'call', tx, gas: 50_000_000n } })
 */
export class EvmWorkers implements EvmRunner {
  readonly #idle: Worker[] = []
  readonly #queue: Job[] = []
  /** Threads alive: idle, loading or running. */
  #started = 0
  #loading = 0
  #closed = false
  #warm = false

  /** evm.timeoutMs in force: a reload's holds for the runs a thread takes from then on. */
  #timeoutMs: number

  constructor(private readonly opts: EvmWorkersOptions) {
    this.#timeoutMs = opts.timeoutMs
  }

  /** A reload's evm.timeoutMs. The threads stay (evm.workers needs a restart). */
  apply(next: { timeoutMs: number }): void {
    this.#timeoutMs = next.timeoutMs
  }

  run(request: RunRequest): Promise<RunOutcome> {
    if (this.#closed) return Promise.reject(new Error('the EVM workers are closed'))
    return new Promise((resolve, reject) => {
      this.#queue.push({ request, resolve, reject })
      this.#next()
    })
  }

  /**
   * Start every thread now, and replace each that ends: a thread takes a few hundred ms to load
   * the EVM's modules (seconds on a loaded machine), which the first runs would otherwise wait.
   * Called at start for a gateway with a network that verifies calls.
   */
  warm(): void {
    this.#warm = true
    while (!this.#closed && this.#started < this.opts.size) this.#spawn()
  }

  async close(): Promise<void> {
    this.#closed = true
    for (const job of this.#queue.splice(0)) job.reject(new Error('the EVM workers are closed'))
    await Promise.all(this.#idle.splice(0).map((w) => w.terminate()))
  }

  #next(): void {
    while (this.#queue.length > 0 && this.#idle.length > 0) this.#give(this.#idle.pop()!, this.#queue.shift()!)
    // As many new threads as runs wait beyond those still loading, up to `size` in all.
    while (this.#queue.length > this.#loading && this.#started < this.opts.size) this.#spawn()
  }

  /** A new thread, idle once it has loaded its modules (not counted against a run's budget). */
  #spawn(): void {
    this.#started++
    this.#loading++
    const worker = new Worker(WORKER)
    worker.unref()
    const failed = (err: Error) => {
      this.#loading--
      worker.off('message', ready)
      // Not replaced (as #end would in a warm pool): a thread that cannot load would fail again at once.
      this.#started--
      void worker.terminate()
      // A thread that cannot start fails the run waiting for it, not every later one.
      this.#queue.shift()?.reject(err)
      this.#next()
    }
    const ready = () => {
      this.#loading--
      worker.off('error', failed)
      if (this.#closed) return this.#end(worker)
      this.#idle.push(worker)
      this.#next()
    }
    worker.once('message', ready)
    worker.once('error', failed)
    // A thread that dies while idle leaves the pool (an 'error' with no listener would end the process).
    worker.on('error', () => {
      const i = this.#idle.indexOf(worker)
      if (i >= 0) {
        this.#idle.splice(i, 1)
        this.#end(worker)
      }
    })
  }

  #give(worker: Worker, job: Job): void {
    const done = (then: () => void, keep: boolean) => {
      clearTimeout(timer)
      worker.off('message', onMessage)
      worker.off('error', onError)
      if (keep && !this.#closed) this.#idle.push(worker)
      else this.#end(worker)
      then()
      this.#next()
    }
    const onMessage = (reply: Reply) => done(() => (reply.ok ? job.resolve(reply.outcome) : job.reject(new Error(`EVM run failed: ${reply.error}`))), true)
    const onError = (err: Error) => done(() => job.reject(err), false)
    const timeoutMs = this.#timeoutMs
    const timer = setTimeout(() => done(() => job.reject(new EvmRunTimeout(timeoutMs, job.request.job.gas)), false), timeoutMs)
    worker.on('message', onMessage)
    worker.on('error', onError)
    worker.postMessage(job.request)
  }

  /** A thread ended (stopped mid-run, or failed): its place is free for a new one. */
  #end(worker: Worker): void {
    this.#started--
    void worker.terminate()
    // A warm pool stays full: the next run does not wait for a thread to load.
    if (this.#warm && !this.#closed) this.#spawn()
  }
}

/** The EVM on the event loop, for a bench's baseline only: no budget holds it. */
export const INLINE_EVM: EvmRunner = { run: runOnSnapshot, warm: () => {}, close: async () => {} }
