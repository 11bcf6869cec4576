import { createHash } from 'node:crypto'
import type { StateStore } from '../../../src/store/state-store.js'

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

export function readModelDigest(store: StateStore): string {
  const hash = createHash('sha256')
  for (const { db, key, value } of store.entries()) {
    if (!READ_MODEL.has(db)) continue
    hash.update(JSON.stringify([db, key, canonical(value)]))
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
