import type { UpstreamPool } from '../upstream/pool.js'
import { EvmWorkers } from './evm-workers.js'
import type { EvmLimits } from './proven-run.js'
import { VerifiedReads } from './verified-reads.js'

/** The config's `evm` defaults (schemas/config.ts), for a registry made without a config. */
const EVM_DEFAULTS = { gasCap: 50_000_000, timeoutMs: 5_000, workers: 2 }

export interface VerifiedRegistryOptions {
  /** Time-out of one node call of a check (limits.upstreamTimeoutMs). */
  timeoutMs: number
  /** The gateway's EVM for verified calls (the config's `evm`; absent: its defaults). */
  evm?: { gasCap: number; timeoutMs: number; workers: number }
}

/**
 * Each network's proven reads (networks.<slug>.verify), made at its first verified read and kept
 * with its pool: a reload keeps the pool, so the trusted headers and kept proofs stay. Verified
 * calls' EVM runs share one pool of worker threads for every network (threads start at the first run).
 * @example
 * const reads = registry.of(pool) // the same object for the same pool
 * await reads.call({ kind: 'full', method: 'eth_getBalance', params: [address, 'latest'], idJson: '1', timeoutMs: 5000 })
 */
export class VerifiedRegistry {
  readonly evm: EvmLimits
  readonly #reads = new WeakMap<UpstreamPool, VerifiedReads>()
  /** For the networks' reads made from now on (a reload's limits.upstreamTimeoutMs): those made keep theirs. */
  #timeoutMs: number
  readonly #workers: EvmWorkers
  #gasCap: bigint

  constructor(opts: VerifiedRegistryOptions) {
    this.#timeoutMs = opts.timeoutMs
    const evm = opts.evm ?? EVM_DEFAULTS
    this.#workers = new EvmWorkers({ size: evm.workers, timeoutMs: evm.timeoutMs })
    this.#gasCap = BigInt(evm.gasCap)
    this.evm = { runner: this.#workers, gasCap: () => this.#gasCap }
  }

  /**
   * A reload: the node calls' time-out for the reads made from now on, and the EVM's gas cap and
   * wall-clock budget for the runs that start from now on (a run going keeps its own).
   */
  apply(next: { timeoutMs: number; evm: { gasCap: number; timeoutMs: number } }): void {
    this.#timeoutMs = next.timeoutMs
    this.#gasCap = BigInt(next.evm.gasCap)
    this.#workers.apply({ timeoutMs: next.evm.timeoutMs })
  }

  /** The network's proven reads, over one set of trusted headers. */
  of(pool: UpstreamPool): VerifiedReads {
    let reads = this.#reads.get(pool)
    if (reads === undefined) {
      reads = new VerifiedReads(pool, { timeoutMs: this.#timeoutMs, evm: this.evm })
      this.#reads.set(pool, reads)
    }
    return reads
  }
}
