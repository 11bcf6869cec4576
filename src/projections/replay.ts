import { createHash } from 'node:crypto'
import type { EventLog } from '../events/log.js'
import { StateStore } from '../store/state-store.js'
import { PARTITION_CHECKPOINT_PREFIX, Projector } from './projector.js'

/** What a replay did: how many events the store now reflects, and the digest of the result. */
export interface ReplayResult {
  events: number
  digest: string
}

export interface ReplayOptions {
  /** Most events per LMDB transaction (default REPLAY_BATCH). */
  batch?: number
  /** Start from an empty store even when an interrupted replay could be resumed. */
  restart?: boolean
  /** Told once before the first transaction: from where this replay applies (1, or the seq a resumed one goes on from). */
  onStart?: (from: number, total: number) => void
  /** Told after each committed transaction (see Projector.catchUp). */
  onProgress?: (done: number, total: number) => void
  /** Stop after the transaction in progress; the replay can be resumed (rejects with the signal's reason). */
  signal?: AbortSignal
}

/**
 * Events per LMDB transaction in a replay. Records that many events change (usage totals, a key's
 * hour, a producer's watermark) are folded in memory and written once per transaction, and ids
 * that leave their window within it are never written: the larger, the fewer writes. Replaying
 * 1,000,000 events over 2,000 keys (bench:replay) wrote 1,310,000 rows at 20,000 events a
 * transaction, 310,000 at 100,000 (mostly usage ids and producers' watermarks). A batch is held as bytes
 * (EventBatch, ~250 bytes an event: 25 MB) while the next is read. A SIGKILL loses at most one
 * batch of work (seconds), which the next run does again.
 */
const REPLAY_BATCH = 100_000

/**
 * Rebuild the projections from the whole log: wipe every db (checkpoint back to 0, in one
 * transaction, which also marks the store as being replayed), then apply the log from seq 1 up to
 * its last seq, reading it with one reader in transactions of REPLAY_BATCH events. A replay that
 * was interrupted (Ctrl-C, SIGKILL, a crash) leaves the mark: the next one goes on from the
 * store's checkpoint, and ends in the same state as one that ran through. Given a path, opens and
 * closes the store itself; given an open store, leaves it open. Stop any projector that follows
 * the same store first, or it keeps applying meanwhile (harmless, but then `events` may count
 * more than the log had when this started).
 * @example
 * const { events, digest } = await replay(join(dataDir, 'state'), log)
 */
export async function replay(store: string | StateStore, log: EventLog, opts: ReplayOptions = {}): Promise<ReplayResult> {
  const owned = typeof store === 'string'
  const state = owned ? StateStore.open(store) : store
  try {
    opts.signal?.throwIfAborted()
    if (opts.restart || !state.replaying()) state.wipe()
    const projector = new Projector(state, log, { batch: opts.batch ?? REPLAY_BATCH })
    // With usage partitions, positions are sums over the log and its partitions (events applied, events held).
    if (opts.onStart) opts.onStart(projector.applied() + 1, await projector.held())
    const events = await projector.catchUp({ onProgress: opts.onProgress, signal: opts.signal })
    state.replayDone()
    return { events, digest: stateDigest(state) }
  } finally {
    if (owned) await state.close()
  }
}

/**
 * SHA-256 (hex) over every entry of every db, db by db and key by key in order, each value in a
 * canonical JSON form (object keys sorted): two stores hold the same state exactly when their
 * digests are equal, whatever order their writes happened in or how msgpack laid the bytes out.
 * The checkpoints are left out: they are positions in a log, not state, and the same events in
 * one stream or in usage partitions (events.partitions) are at other positions.
 */
export function stateDigest(store: StateStore): string {
  const hash = createHash('sha256')
  // One update per ~64 KB, not per entry: a digest of a million rows is part of every replay.
  let chunk = ''
  let db = ''
  let dbJson = ''
  for (const entry of store.entries()) {
    if (entry.db === 'meta' && (entry.key === 'checkpoint' || entry.key.startsWith(PARTITION_CHECKPOINT_PREFIX))) continue
    if (entry.db !== db) dbJson = JSON.stringify((db = entry.db))
    chunk += `[${dbJson},${JSON.stringify(entry.key)},${canonicalJson(entry.value)}]\n`
    if (chunk.length >= 65_536) {
      hash.update(chunk)
      chunk = ''
    }
  }
  hash.update(chunk)
  return hash.digest('hex')
}

/**
 * JSON.stringify of the value with object keys sorted at every depth (it keeps insertion order),
 * written directly rather than by building a sorted copy first. The same text as before for every
 * value (the digests of stores built earlier stay comparable): numbers as JSON writes them
 * (String() of a finite number is JSON's form), keys sorted only when they are not in order
 * already (records decoded from msgpack mostly are, or always are in one order), and a property
 * name's JSON kept once it was written (a few dozen names over a million rows).
 */
export function canonicalJson(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value)
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null'
    case 'boolean':
      return value ? 'true' : 'false'
    case 'object':
      break
    default:
      return JSON.stringify(value) ?? 'null'
  }
  if (value === null) return 'null'
  if (Array.isArray(value)) {
    let out = ''
    for (let i = 0; i < value.length; i++) out += `${i === 0 ? '' : ','}${canonicalJson(value[i])}`
    return `[${out}]`
  }
  const object = value as Record<string, unknown>
  const keys = Object.keys(object)
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) {
      keys.sort()
      break
    }
  }
  let out = ''
  for (const k of keys) {
    const v = object[k]
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue
    let name = NAME_JSON.get(k)
    if (name === undefined) {
      name = JSON.stringify(k)
      if (NAME_JSON.size < NAMES_KEPT) NAME_JSON.set(k, name)
    }
    out += `${out === '' ? '' : ','}${name}:${canonicalJson(v)}`
  }
  return `{${out}}`
}

/** Property names with their JSON (see canonicalJson); bounded, for values whose keys are data (a map by id). */
const NAME_JSON = new Map<string, string>()
const NAMES_KEPT = 4_096
