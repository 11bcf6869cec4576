import { systemClock, type Clock } from '../../actors/runtime/clock.js'

export interface NodeHealthOptions {
  /** Consecutive transport failures that take a node out (default 3). */
  failureThreshold?: number
  /** How long a node stays out before one call may probe it (default 5 s). */
  cooldownMs?: number
  /**
   * Share of failed calls among the last `errorWindow` that takes a node out (default 0.5), so
   * that a node failing every other call is out too (consecutive failures alone would let it
   * flap in and out).
   */
  maxErrorRate?: number
  /** Calls the error rate is computed over (default 40); the rate counts only once it is full. */
  errorWindow?: number
  /**
   * Blocks behind the best node of the network that take a node out (default 10); it comes back
   * when it is within half of that again, so that a node hovering at the bound does not flap.
   */
  maxLagBlocks?: number
  /** The check of the node's chain (see ChainCheck); without it the chain is not checked. */
  chain?: ChainCheck
  clock?: Clock
}

/** Why a node is out, for /metrics and logs. */
export type OutReason = 'failures' | 'error-rate' | 'behind' | 'wrong-chain' | 'disputes'

/**
 * A node's chain, checked against its network's `chainId`: a node of another chain put into a
 * network by mistake answers every state read with its own chain's state (at the same height
 * nothing else tells them apart), so it must never serve. The head monitor asks each node's
 * eth_chainId at start and at every poll (a node restarted on another chain is caught at the first
 * poll it answers); the node is out while the last answer differs. No answer, or an unreadable
 * one, changes nothing: a node that does not answer is the failure counters' business.
 * @example
 * const chain = new ChainCheck(1)
 * chain.observe(31337) // true: the verdict changed, log it
 * chain.wrong // true
 */
export class ChainCheck {
  /** The node's eth_chainId at the last answer, undefined before the first. */
  #actual: number | undefined

  constructor(readonly expected: number) {}

  get actual(): number | undefined {
    return this.#actual
  }

  /** The node answered on another chain than its network's. */
  get wrong(): boolean {
    return this.#actual !== undefined && this.#actual !== this.expected
  }

  /** Record the node's eth_chainId; true when this changed whether the node is on the wrong chain. */
  observe(actual: number): boolean {
    const was = this.wrong
    this.#actual = actual
    return this.wrong !== was
  }
}

/**
 * A node's health: a small circuit breaker plus a lag gate. Up; out for a cooldown after
 * `failureThreshold` consecutive transport failures or an error rate over `maxErrorRate`; then one
 * call at a time may probe it, and the first success lets it in again. Independently, a node more
 * than `maxLagBlocks` behind the best node of its network is out until it catches up (the head
 * monitor keeps polling it: that poll is its probe), and a node on another chain than its
 * network's (see ChainCheck) is out until it answers the right chain id. A JSON-RPC error answered
 * by the node is a success here: the node works.
 */
export class NodeHealth {
  #threshold: number
  #cooldownMs: number
  #maxErrorRate: number
  #maxLagBlocks: number
  readonly #clock: Clock
  /** Outcomes of the last calls, 1 = failed, as a ring. */
  readonly #outcomes: Uint8Array
  #outcomeCount = 0
  #outcomeNext = 0
  #failuresInWindow = 0
  #consecutiveFailures = 0
  /** 0 while up; else the time the cooldown ends. */
  #outUntil = 0
  #outReason: OutReason | undefined
  /** A probe call is in flight: others keep away until it tells (one bad node, one wasted call). */
  #probing = false
  /** Calls that probed the node while it was out, since start (for /metrics). */
  #probes = 0
  #lag: number | undefined
  #behind = false
  readonly #chain: ChainCheck | undefined
  /** 0, or the time a sit-out for answering against consensus ends (see sitOut). */
  #sitOutUntil = 0

  constructor(opts: NodeHealthOptions = {}) {
    this.#threshold = opts.failureThreshold ?? 3
    this.#cooldownMs = opts.cooldownMs ?? 5_000
    this.#maxErrorRate = opts.maxErrorRate ?? 0.5
    this.#outcomes = new Uint8Array(opts.errorWindow ?? 40)
    this.#maxLagBlocks = opts.maxLagBlocks ?? 10
    this.#chain = opts.chain
    this.#clock = opts.clock ?? systemClock
  }

  /**
   * New bounds from a reloaded config, kept state and all: a node that is out stays out until its
   * cooldown ends, and the new bounds count from its next call (the error window keeps its size).
   */
  retune(opts: Pick<NodeHealthOptions, 'failureThreshold' | 'cooldownMs' | 'maxErrorRate' | 'maxLagBlocks'>): void {
    this.#threshold = opts.failureThreshold ?? this.#threshold
    this.#cooldownMs = opts.cooldownMs ?? this.#cooldownMs
    this.#maxErrorRate = opts.maxErrorRate ?? this.#maxErrorRate
    this.#maxLagBlocks = opts.maxLagBlocks ?? this.#maxLagBlocks
  }

  /** May a call be sent to this node now (in step, and up or out with its cooldown over and no probe running)? */
  available(): boolean {
    if (this.#behind || this.#chain?.wrong) return false
    if (this.#sitOutUntil !== 0 && !this.#sitOutOver()) return false
    if (this.#outUntil === 0) return true
    return !this.#probing && this.#clock.now() >= this.#outUntil
  }

  /**
   * The node is up: not out, not behind, on its chain, not sitting out. A node that is out stays
   * not up while it is probed (see halfOpen): what /metrics reports as healthy, so that a probe
   * does not read as the node being back.
   */
  up(): boolean {
    return this.#outUntil === 0 && !this.#behind && this.#chain?.wrong !== true && (this.#sitOutUntil === 0 || this.#sitOutOver())
  }

  /** Why the node is out, undefined while it is up. */
  outReason(): OutReason | undefined {
    // First: whatever else is wrong with it, it must not serve until it is on the right chain.
    if (this.#chain?.wrong) return 'wrong-chain'
    if (this.#behind) return 'behind'
    if (this.#sitOutUntil !== 0 && !this.#sitOutOver()) return 'disputes'
    return this.#outUntil === 0 ? undefined : this.#outReason
  }

  /**
   * Out after failures, with its cooldown over: the next call probes it, or a probe is in flight
   * (a circuit breaker's half-open state). The node is not up meanwhile; the probe's success lets
   * it in.
   */
  halfOpen(): boolean {
    return this.#outUntil !== 0 && (this.#probing || this.#clock.now() >= this.#outUntil)
  }

  /** Calls that probed the node while it was out (the head poll's, or a client's), since start. */
  get probes(): number {
    return this.#probes
  }

  /** A call is being sent; when the node is out and cooling down is over, this call is the probe. */
  begin(): void {
    if (this.#outUntil !== 0 && !this.#probing && this.#clock.now() >= this.#outUntil) {
      this.#probing = true
      this.#probes++
    }
  }

  succeeded(): void {
    this.#consecutiveFailures = 0
    if (this.#outUntil !== 0) {
      // Back in: the failures that took it out must not take it out again at the next one.
      this.#outcomes.fill(0)
      this.#outcomeCount = 0
      this.#failuresInWindow = 0
    } else {
      this.#push(0)
    }
    this.#outUntil = 0
    this.#outReason = undefined
    this.#probing = false
  }

  failed(): void {
    this.#consecutiveFailures++
    if (this.#probing) {
      this.#probing = false
      this.#outUntil = this.#clock.now() + this.#cooldownMs
      return
    }
    if (this.#outUntil !== 0) return
    this.#push(1)
    if (this.#consecutiveFailures >= this.#threshold) this.#takeOut('failures')
    else if (this.#outcomeCount === this.#outcomes.length && this.errorRate() > this.#maxErrorRate) this.#takeOut('error-rate')
  }

  /** Share of failed calls among the last ones (0 with none). */
  errorRate(): number {
    return this.#outcomeCount === 0 ? 0 : this.#failuresInWindow / this.#outcomeCount
  }

  /** The head monitor's measure: blocks behind the best node of the network. */
  observeLag(lag: number): void {
    this.#lag = lag
    if (lag > this.#maxLagBlocks) this.#behind = true
    else if (lag <= Math.floor(this.#maxLagBlocks / 2)) this.#behind = false
  }

  /** Blocks behind the best node at the last head poll, undefined before the first. */
  lag(): number | undefined {
    return this.#lag
  }

  /**
   * Out for `ms` whatever its calls do: it answered against its network's consensus too often
   * (see Disputes). Its answers are not trusted until the time is over; then it takes calls again.
   */
  sitOut(ms: number): void {
    this.#sitOutUntil = this.#clock.now() + ms
  }

  #sitOutOver(): boolean {
    if (this.#clock.now() < this.#sitOutUntil) return false
    this.#sitOutUntil = 0
    return true
  }

  #takeOut(reason: OutReason): void {
    this.#outUntil = this.#clock.now() + this.#cooldownMs
    this.#outReason = reason
  }

  #push(failed: 0 | 1): void {
    if (this.#outcomeCount === this.#outcomes.length) this.#failuresInWindow -= this.#outcomes[this.#outcomeNext]
    else this.#outcomeCount++
    this.#outcomes[this.#outcomeNext] = failed
    this.#failuresInWindow += failed
    this.#outcomeNext = (this.#outcomeNext + 1) % this.#outcomes.length
  }
}
