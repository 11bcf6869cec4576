import { createHash } from 'node:crypto'
import type { StateStore } from '../../../src/store/state-store.js'
import { UNITS_PER_CALL_BEFORE_COSTS } from '../../../src/events/usage-units.js'

/**
 * The digest of what the read models show (accounts, keys, plans, invoices, sessions, private
 * nodes, penalties, usage), leaving out the tables that only serve the projector's own
 * bookkeeping (claims, ids already counted, the checkpoint): those may change shape from one
 * version to the next while what users see must not.
 */
const READ_MODEL = new Set([
  'keys',
  'keyIds',
  'accounts',
  'wallets',
  'usage',
  'penalties',
  'sessions',
  'invoices',
  'invoicesByAccount',
  'privateNodes',
  'usageHourly',
])

/**
 * @param unitsAdded when given, the usage rows' `units` (added after the old log was written) are
 * left out of the digest, and each row whose units are not its calls × 26 (what a version 1
 * UsageRecorded counts, src/events/usage-units.ts) is named in it.
 */
export function readModelDigest(store: StateStore, unitsAdded?: string[]): string {
  const hash = createHash('sha256')
  for (const { db, key, value } of store.entries()) {
    if (!READ_MODEL.has(db)) continue
    let shown = value
    if (unitsAdded !== undefined && (db === 'usage' || db === 'usageHourly')) {
      const { units, ...rest } = value as { units?: number; requests: number }
      if (units !== rest.requests * UNITS_PER_CALL_BEFORE_COSTS) unitsAdded.push(`${db} ${key}: ${units} units for ${rest.requests} calls`)
      shown = rest
    }
    hash.update(JSON.stringify([db, key, canonical(shown)]))
    hash.update('\n')
  }
  return hash.digest('hex')
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(value).sort()) out[k] = canonical((value as Record<string, unknown>)[k])
    return out
  }
  return value
}
