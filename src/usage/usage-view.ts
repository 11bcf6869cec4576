import type { NodeKind } from '../core/node-kind.js'
import { HOUR_MS, type RefusalsByRule } from '../store/records.js'
import type { StateStore } from '../store/state-store.js'
import { accountRefusals, usageHourly } from './usage-queries.js'

/** One network and node kind's calls, errors and compute units per hour, oldest hour first. */
export interface UsageSeries {
  network: string
  kind: NodeKind
  requests: number[]
  errors: number[]
  units: number[]
}

/** What the dashboard shows of an account's usage: `hours` hours of `hourMs` from `from`, and the refusals of its keys' rules. */
export interface AccountUsageView {
  from: number
  hours: number
  hourMs: number
  series: UsageSeries[]
  refused: RefusalsByRule
}

/** The dashboard's longest view, in hours. */
export const MAX_USAGE_HOURS = 168

/** The hours a view asks for: 1 to MAX_USAGE_HOURS, 24 when absent or not a number. */
export function usageHours(param: unknown): number {
  return Math.min(MAX_USAGE_HOURS, Math.max(1, Math.floor(Number(param) || 24)))
}

/**
 * An account's calls and their compute units per hour for the last `hours` hours at `now` (its
 * hour included), by network and node kind; and the calls its keys' own rules refused in those
 * hours, by rule. Read from `store` as of its last commit; `now` is the asker's, so that an
 * instance answering for another shows the hours the asker means.
 */
export function accountUsageView(store: StateStore, accountId: string, hours: number, now: number): AccountUsageView {
  const lastHour = now - (now % HOUR_MS)
  const from = lastHour - (hours - 1) * HOUR_MS
  const series = new Map<string, UsageSeries>()
  for (const row of usageHourly(store, accountId, from, lastHour + HOUR_MS)) {
    const id = `${row.network}:${row.kind}`
    let s = series.get(id)
    if (s === undefined)
      series.set(
        id,
        (s = {
          network: row.network,
          kind: row.kind,
          requests: new Array<number>(hours).fill(0),
          errors: new Array<number>(hours).fill(0),
          units: new Array<number>(hours).fill(0),
        }),
      )
    const i = (row.hour - from) / HOUR_MS
    s.requests[i] += row.requests
    s.errors[i] += row.errors
    s.units[i] += row.units
  }
  const refused = accountRefusals(store, accountId, from, lastHour + HOUR_MS)
  return { from, hours, hourMs: HOUR_MS, series: [...series.values()], refused }
}
