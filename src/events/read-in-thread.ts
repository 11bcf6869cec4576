import { Worker } from 'node:worker_threads'
import { EventBatch, type EventBatchParts } from './event-batch.js'
import { EventLogUnavailable } from './errors.js'

/** Where the reader thread reads: what it connects with as it starts (src/events/read-thread.js). */
export interface ReaderThreadOptions {
  servers: string | string[]
  /** Connection name shown by the server. */
  name: string
  stream: string
  /** Longest silence of the thread (no fetch ended) before the read is given up, in ms (default READ_TIMEOUT_MS). */
  timeoutMs?: number
}

/** What it reads: told when the read begins. */
export interface ThreadReadOptions {
  /** First and last seq to read. */
  from: number
  to: number
  /** Most events per batch handed to onBatch. */
  batch: number
  /** Most messages per fetch. */
  fetchMax: number
}

type ThreadMessage = ({ type: 'batch' } & EventBatchParts) | { type: 'fetched'; got: number } | { type: 'end' } | { type: 'error'; message: string }

/** Reads longer than this (server gone mid-fetch) give up with EventLogUnavailable. */
export const READ_TIMEOUT_MS = 10_000
const READ_THREAD = new URL('./read-thread.js', import.meta.url)
/** How long a stopped thread gets to delete its consumer and close before it is ended. */
const STOP_GRACE_MS = 2_000
/** The reader thread's young generation (see the Worker's resourceLimits). */
const READER_YOUNG_GENERATION_MB = 8

/** The options of the reader thread of a JetStream log (its own readAll and a caller that starts one early alike). */
export function readerThreadOptions(log: { servers: string | string[]; stream: string; name?: string }): ReaderThreadOptions {
  return { servers: log.servers, stream: log.stream, name: `${log.name ?? 'tollgate'} reader`, timeoutMs: READ_TIMEOUT_MS }
}

/**
 * JetStreamLog.readAll with the NATS client in a worker thread: it reads and packs batches of
 * encoded events while onBatch applies the one before; this thread only decodes and applies.
 *
 * The thread connects as soon as it starts, and reads once read() says what: a replay starts it
 * before it loads its own modules and opens its store, so that the thread's start (its NATS
 * client loaded, a connection made: 0.6-1.2 s on a loaded machine) is not added to the replay's.
 * A thread never read from is stopped by stop(), and never keeps the process alive.
 * @example
 * const reader = ReaderThread.start({ servers, name: 'tollgate reader', stream: 'TOLLGATE' })
 * const last = await reader.read({ from: 1, to, batch: 100_000, fetchMax: 20_000 }, (batch) => apply(batch))
 */
export class ReaderThread {
  readonly #worker: Worker
  readonly #inbox: Inbox
  readonly #stream: string
  #used = false

  private constructor(opts: ReaderThreadOptions) {
    const timeoutMs = opts.timeoutMs ?? READ_TIMEOUT_MS
    this.#stream = opts.stream
    this.#worker = new Worker(READ_THREAD, {
      workerData: { servers: opts.servers, name: opts.name, stream: opts.stream, timeoutMs },
      // The thread is plain JavaScript: no loader of this process (tsx, a test runner's), which
      // made it start in 0.8 s instead of 0.1 s.
      execArgv: [],
      // Its young generation grew to its default (48 MB) for garbage that dies at once (a message
      // object per event): a small one costs more frequent scavenges of almost nothing.
      resourceLimits: { maxYoungGenerationSizeMb: READER_YOUNG_GENERATION_MB },
    })
    // Until it reads, the thread does not keep the process alive.
    this.#worker.unref()
    this.#inbox = new Inbox(this.#worker, opts.stream, timeoutMs)
  }

  /** Start the thread; it connects now (a failure is told by read()). */
  static start(opts: ReaderThreadOptions): ReaderThread {
    return new ReaderThread(opts)
  }

  /** Whether read() was called (a thread reads once). */
  get used(): boolean {
    return this.#used
  }

  /**
   * Read from..to, handing over batches of at most `batch` events. Resolves with the last seq
   * delivered; rejects with onBatch's error (the thread is stopped and nothing more is delivered)
   * or EventLogUnavailable. The thread ends with the read.
   */
  async read(opts: ThreadReadOptions, onBatch: (batch: EventBatch) => Promise<void> | void): Promise<number> {
    if (this.#used) throw new Error(`the reader thread of stream ${this.#stream} has read already`)
    this.#used = true
    this.#worker.ref()
    this.#worker.postMessage({ type: 'read', ...opts })
    let last = opts.from - 1
    try {
      for (;;) {
        const message = await this.#inbox.next()
        if (message.type === 'fetched') continue
        if (message.type === 'end') return last
        if (message.type === 'error') throw new EventLogUnavailable(`cannot read stream ${this.#stream}: ${message.message}`)
        const events = new EventBatch(message)
        await onBatch(events)
        last = events.lastSeq!
        // Its buffers go back to the thread for a later batch (transferred: unusable here from now on).
        const buffers = events.release()
        this.#worker.postMessage({ type: 'more', ...buffers }, [buffers.bytes, buffers.seqs, buffers.ends])
      }
    } finally {
      this.stop()
    }
  }

  /** End the thread (it deletes its consumer and closes its connection first, for up to STOP_GRACE_MS). */
  stop(): void {
    this.#inbox.close()
    this.#worker.postMessage('stop')
    const timer = setTimeout(() => void this.#worker.terminate(), STOP_GRACE_MS)
    timer.unref()
    this.#worker.once('exit', () => clearTimeout(timer))
  }
}

/** The thread's messages, one at a time; its failure or silence as EventLogUnavailable. */
class Inbox {
  readonly #queue: ThreadMessage[] = []
  readonly #stream: string
  readonly #timeoutMs: number
  #failure: EventLogUnavailable | undefined
  #waiting: (() => void) | undefined
  readonly #worker: Worker
  readonly #onMessage = (message: ThreadMessage): void => this.#add(message)
  readonly #onError = (err: Error): void =>
    this.#fail(new EventLogUnavailable(`the reader thread of stream ${this.#stream} failed: ${err.message}`, { cause: err }))
  readonly #onExit = (code: number): void =>
    this.#fail(new EventLogUnavailable(`the reader thread of stream ${this.#stream} ended (exit code ${code}) before the end of the read`))

  constructor(worker: Worker, stream: string, timeoutMs: number) {
    this.#worker = worker
    this.#stream = stream
    this.#timeoutMs = timeoutMs
    worker.on('message', this.#onMessage)
    worker.once('error', this.#onError)
    worker.once('exit', this.#onExit)
  }

  async next(): Promise<ThreadMessage> {
    for (;;) {
      const message = this.#queue.shift()
      if (message !== undefined) return message
      if (this.#failure !== undefined) throw this.#failure
      // Timed from when we wait: a thread whose fetches all hang (NATS gone mid-read) is given up.
      let timer: NodeJS.Timeout | undefined
      await new Promise<void>((resolve) => {
        this.#waiting = resolve
        timer = setTimeout(
          () => this.#fail(new EventLogUnavailable(`stream ${this.#stream} sent nothing to its reader thread in ${this.#timeoutMs} ms`)),
          this.#timeoutMs,
        )
      })
      clearTimeout(timer)
    }
  }

  close(): void {
    this.#worker.off('message', this.#onMessage)
    this.#worker.off('error', this.#onError)
    this.#worker.off('exit', this.#onExit)
  }

  #add(message: ThreadMessage): void {
    this.#queue.push(message)
    this.#wake()
  }

  #fail(err: EventLogUnavailable): void {
    this.#failure ??= err
    this.#wake()
  }

  #wake(): void {
    const waiting = this.#waiting
    this.#waiting = undefined
    waiting?.()
  }
}
