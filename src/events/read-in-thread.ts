import { Worker } from 'node:worker_threads'
import { EventBatch, type EventBatchParts } from './event-batch.js'
import { EventLogUnavailable } from './log.js'

/** What the reader thread is told (src/events/read-thread.js). */
export interface ReadInThreadOptions {
  servers: string | string[]
  /** Connection name shown by the server. */
  name: string
  stream: string
  /** First and last seq to read. */
  from: number
  to: number
  /** Most events per batch handed to onBatch. */
  batch: number
  /** Most messages per fetch. */
  fetchMax: number
  /** Longest silence of the thread (no fetch ended) before the read is given up, in ms. */
  timeoutMs: number
}

type ThreadMessage = ({ type: 'batch' } & EventBatchParts) | { type: 'fetched'; got: number } | { type: 'end' } | { type: 'error'; message: string }

const READ_THREAD = new URL('./read-thread.js', import.meta.url)
/** How long a stopped thread gets to delete its consumer and close before it is ended. */
const STOP_GRACE_MS = 2_000

/**
 * JetStreamLog.readAll with the NATS client in a worker thread: it reads and packs batches of
 * encoded events while onBatch applies the one before; this thread only decodes and applies.
 * Resolves with the last seq delivered; rejects with onBatch's error (the thread is stopped and
 * nothing more is delivered) or EventLogUnavailable.
 */
export async function readInThread(opts: ReadInThreadOptions, onBatch: (batch: EventBatch) => Promise<void> | void): Promise<number> {
  const worker = new Worker(READ_THREAD, {
    workerData: opts,
    // The thread is plain JavaScript: no loader of this process (tsx, a test runner's), which
    // made it start in 0.8 s instead of 0.1 s.
    execArgv: [],
  })
  const inbox = new Inbox(worker, opts)
  let last = opts.from - 1
  try {
    for (;;) {
      const message = await inbox.next()
      if (message.type === 'fetched') continue
      if (message.type === 'end') return last
      if (message.type === 'error') throw new EventLogUnavailable(`cannot read stream ${opts.stream}: ${message.message}`)
      const events = new EventBatch(message)
      await onBatch(events)
      last = events.lastSeq!
      worker.postMessage('more')
    }
  } finally {
    inbox.close()
    worker.postMessage('stop')
    const timer = setTimeout(() => void worker.terminate(), STOP_GRACE_MS)
    worker.once('exit', () => clearTimeout(timer))
  }
}

/** The thread's messages, one at a time; its failure or silence as EventLogUnavailable. */
class Inbox {
  readonly #queue: ThreadMessage[] = []
  readonly #opts: ReadInThreadOptions
  #failure: EventLogUnavailable | undefined
  #waiting: (() => void) | undefined
  readonly #worker: Worker
  readonly #onMessage = (message: ThreadMessage): void => this.#add(message)
  readonly #onError = (err: Error): void =>
    this.#fail(new EventLogUnavailable(`the reader thread of stream ${this.#opts.stream} failed: ${err.message}`, { cause: err }))
  readonly #onExit = (code: number): void =>
    this.#fail(new EventLogUnavailable(`the reader thread of stream ${this.#opts.stream} ended (exit code ${code}) before the end of the read`))

  constructor(worker: Worker, opts: ReadInThreadOptions) {
    this.#worker = worker
    this.#opts = opts
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
          () => this.#fail(new EventLogUnavailable(`stream ${this.#opts.stream} sent nothing to its reader thread in ${this.#opts.timeoutMs} ms`)),
          this.#opts.timeoutMs,
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
