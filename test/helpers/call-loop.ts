import { Agent, request } from 'undici'

/** What a CallLoop saw. */
export interface CallLoopCounts {
  /** Calls answered 200 with a result. */
  served: number
  /** Calls that got anything else (another status, an error body, a broken connection). */
  failed: number
  /** Connections refused (no instance listening, as during a restart); retried, not failures. */
  refused: number
  /** The first few failures, for the test's message. */
  failures: string[]
  /** When each failure was seen (ms since the epoch). */
  failedAt: number[]
  /** Answer times of served calls (ms since the epoch), in order. */
  servedAt: number[]
}

/**
 * Real clients calling a gateway without pause until stopped: `concurrency` loops, each on its own
 * keep-alive connection (undici, as viem and ethers use through fetch). A refused connection is
 * retried after a short pause (clients retry a deploy's gap); anything else that is not a 200
 * with a result counts as a failure.
 */
export class CallLoop {
  readonly counts: CallLoopCounts = { served: 0, failed: 0, refused: 0, failures: [], failedAt: [], servedAt: [] }
  readonly #agent = new Agent({ keepAliveTimeout: 30_000, pipelining: 1 })
  readonly #loops: Promise<void>[] = []
  #stopped = false
  #closed: Promise<void> | undefined

  constructor(url: () => string, concurrency = 2) {
    for (let i = 0; i < concurrency; i++) this.#loops.push(this.#run(url, i))
  }

  async #run(url: () => string, loop: number): Promise<void> {
    let id = loop * 1_000_000
    while (!this.#stopped) {
      id++
      try {
        const res = await request(url(), {
          method: 'POST',
          dispatcher: this.#agent,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_blockNumber', params: [] }),
        })
        const text = await res.body.text()
        if (res.statusCode === 200 && JSON.parse(text).result !== undefined) {
          this.counts.served++
          this.counts.servedAt.push(Date.now())
        } else this.#fail(`${res.statusCode} ${text.slice(0, 200)}`)
      } catch (err) {
        const code = (err as { code?: string }).code
        if (code === 'ECONNREFUSED') {
          this.counts.refused++
          await new Promise((r) => setTimeout(r, 20))
        } else this.#fail(`${code ?? ''} ${String(err)}`)
      }
    }
  }

  #fail(what: string): void {
    this.counts.failed++
    this.counts.failedAt.push(Date.now())
    if (this.counts.failures.length < 5) this.counts.failures.push(what)
  }

  /** Wait until `served` has grown by `n` from now (bounded). */
  async more(n: number, withinMs = 30_000): Promise<void> {
    const target = this.counts.served + n
    const deadline = Date.now() + withinMs
    while (this.counts.served < target) {
      if (Date.now() > deadline)
        throw new Error(`only ${this.counts.served} of ${target} calls served within ${withinMs} ms; failures: ${this.counts.failures.join(' | ')}`)
      await new Promise((r) => setTimeout(r, 20))
    }
  }

  /** Stop calling (idempotent) and resolve with the counts once every loop has ended. */
  stop(): Promise<CallLoopCounts> {
    this.#stopped = true
    this.#closed ??= Promise.all(this.#loops).then(() => this.#agent.close())
    return this.#closed.then(() => this.counts)
  }
}
