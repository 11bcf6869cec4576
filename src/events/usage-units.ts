import type { UsageRecorded } from './types.js'

/**
 * What each call of a UsageRecorded of version 1 counts, in compute units. Those events were
 * written before calls had a cost and name no method, so their units cannot come from the method
 * table: each call counts as an eth_call (26), the commonest call. A constant, not the configured
 * cost of eth_call: a replay of the same log must give the same units whatever the configuration.
 */
export const UNITS_PER_CALL_BEFORE_COSTS = 26

/**
 * The compute units of a UsageRecorded of any version (see UNITS_PER_CALL_BEFORE_COSTS).
 * @example
 * unitsOf({ requests: 3 }) // 78: a version 1 event
 * unitsOf({ requests: 3, units: 930 }) // 930
 */
export function unitsOf(usage: Pick<UsageRecorded, 'requests' | 'units'>): number {
  return usage.units ?? usage.requests * UNITS_PER_CALL_BEFORE_COSTS
}
