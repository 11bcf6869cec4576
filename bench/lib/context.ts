import type { BenchOptions } from './options.js'
import type { TargetSet } from './targets.js'

/** What every scenario of a run shares. */
export interface BenchContext {
  opts: BenchOptions
  set: TargetSet
  /** Path of wrk, when installed. */
  wrk?: string
  /** Skips and anomalies, printed with the table and kept in latest.json. */
  notes: string[]
  /** Progress on stderr (stdout is the table). */
  log(line: string): void
}
