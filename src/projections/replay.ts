import { createHash } from 'node:crypto'
import type { EventLog } from '../events/log.js'
import { StateStore } from '../store/state-store.js'
import { Projector } from './projector.js'

/** What a replay did: how many events the store now reflects, and the digest of the result. */
export interface ReplayResult {
  events: number
  digest: string
}

/**
 * Rebuild the projections from the whole log: wipe every db (checkpoint back to 0, in one
 * transaction), then apply the log from seq 1 up to its last seq as of now. Given a path, opens
 * and closes the store itself; given an open store, leaves it open. Stop any projector that
 * follows the same store first, or it keeps applying meanwhile (harmless, but then `events`
 * may count more than the log had when this started).
 * @example
 * const { events, digest } = await replay(join(dataDir, 'state'), log)
 */
export async function replay(store: string | StateStore, log: EventLog, opts: { batch?: number } = {}): Promise<ReplayResult> {
  const owned = typeof store === 'string'
  const state = owned ? StateStore.open(store) : store
  try {
    state.wipe()
    await new Projector(state, log, opts).catchUp()
    return { events: state.checkpoint(), digest: stateDigest(state) }
  } finally {
    if (owned) await state.close()
  }
}

/**
 * SHA-256 (hex) over every entry of every db, db by db and key by key in order, each value in a
 * canonical JSON form (object keys sorted): two stores hold the same state exactly when their
 * digests are equal, whatever order their writes happened in or how msgpack laid the bytes out.
 */
export function stateDigest(store: StateStore): string {
  const hash = createHash('sha256')
  for (const { db, key, value } of store.entries()) {
    hash.update(JSON.stringify([db, key, canonical(value)]))
    hash.update('\n')
  }
  return hash.digest('hex')
}

/** The value with object keys sorted at every depth (JSON.stringify keeps insertion order). */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(value).sort()) out[k] = canonical((value as Record<string, unknown>)[k])
    return out
  }
  return value
}
