import type { Upstreams } from '../upstream/upstreams.js'

/**
 * The head block of each network, as the nodes report it: the router compares block numbers with
 * it to send old state to archive nodes. Polled with eth_blockNumber (one call per network per
 * interval, on any kind of node); the highest answer wins, so a lagging node cannot pull it back.
 */
export class HeadTracker {
  readonly #heads = new Map<string, number>()
  #timer: NodeJS.Timeout | undefined

  constructor(
    private readonly upstreams: Upstreams,
    private readonly opts: { intervalMs: number; timeoutMs: number; onError?: (network: string, err: unknown) => void },
  ) {}

  head(network: string): number | undefined {
    return this.#heads.get(network)
  }

  /** Record a head seen elsewhere (a newHeads notification, a response). */
  observe(network: string, block: number): void {
    const known = this.#heads.get(network)
    if (known === undefined || block > known) this.#heads.set(network, block)
  }

  /** Poll every network now and then every interval; resolves after the first round. */
  async start(): Promise<void> {
    await this.pollAll()
    this.#timer = setInterval(() => void this.pollAll(), this.opts.intervalMs)
    this.#timer.unref()
  }

  async pollAll(): Promise<void> {
    await Promise.all(this.upstreams.networks().map((n) => this.#poll(n)))
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer)
  }

  async #poll(network: string): Promise<void> {
    const pool = this.upstreams.pool(network)
    if (!pool) return
    const kind = pool.hasHealthy('full') || !pool.hasKind('archive') ? 'full' : 'archive'
    try {
      const reply = await pool.call(kind, 'eth_blockNumber', [], '0', { timeoutMs: this.opts.timeoutMs })
      const m = /"result"\s*:\s*"(0x[0-9a-fA-F]+)"/.exec(reply.body)
      if (m) this.observe(network, parseInt(m[1], 16))
    } catch (err) {
      this.opts.onError?.(network, err)
    }
  }
}
