import { createHash } from 'node:crypto'
import type { Database } from 'lmdb'
import type { EventLog } from '../events/log.js'
import { STATE_DB_NAMES, StateStore } from '../store/state-store.js'
import { PARTITION_CHECKPOINT_PREFIX } from './log-source.js'
import { Projector } from './projector.js'

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
  /** Whether usage is projected (config `usage.project`; default true): false reads past usage events, as the instance's projector does. */
  usage?: boolean
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
    const projector = new Projector(state, log, { batch: opts.batch ?? REPLAY_BATCH, usage: opts.usage })
    // With usage partitions, positions are sums over the log and its partitions (events applied, events held).
    if (opts.onStart) opts.onStart(projector.applied() + 1, await projector.held())
    const events = await projector.catchUp({ onProgress: opts.onProgress, signal: opts.signal })
    state.replayDone()
    return { events, digest: stateDigest(state) }
  } finally {
    if (owned) await state.close()
  }
}

export function stateDigest(store: StateStore): string {
  const hash = createHash('sha256')
  // One update per ~64 KB, not per entry: a digest of a million rows is part of every replay.
  let chunk = ''
  // Each db read straight (not through StateStore.entries(), one more generator and object an
  // entry), in the order entries() walks them: the same text.
  for (const name of STATE_DB_NAMES) {
    const dbJson = JSON.stringify(name)
    const meta = name === 'meta'
    for (const { key, value } of (store.table(name) as Database<unknown, string>).getRange({})) {
      if (meta && (key === 'checkpoint' || key.startsWith(PARTITION_CHECKPOINT_PREFIX))) continue
      chunk += `[${dbJson},${JSON.stringify(key)},${canonicalJson(value)}]\n`
      if (chunk.length >= 65_536) {
        hash.update(chunk)
        chunk = ''
      }
    }
  }
  hash.update(chunk)
  return hash.digest('hex')
}

/**
 * JSON.stringify of the value with object keys sorted at every depth (it keeps insertion order),
 * written directly rather than by building a sorted copy first. The same text as before for every
 * value (the digests of stores built earlier stay comparable): numbers as JSON writes them
 * (String() of a finite number is JSON's form), and an object's keys sorted once per shape (see
 * ObjectShape): the rows of a table are one or a few shapes over hundreds of thousands of rows,
 * and most are not in order (usage rows begin with `requests`).
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
  const shape = shapeOf(keys)
  const sorted = shape.sorted
  let out = '{'
  for (let i = 0; i < sorted.length; i++) {
    const v = object[sorted[i]!]
    // JSON.stringify leaves such a property out, and the commas with it: written the long way.
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return canonicalObjectSkipping(object, sorted)
    out += shape.names[i]! + canonicalJson(v)
  }
  return `${out}}`
}

/**
 * An object's keys, as Object.keys gave them, with the same keys sorted and each sorted key's
 * JSON with what goes before it (`"name":`, then `,"name":`).
 */
interface ObjectShape {
  keys: string[]
  sorted: string[]
  names: string[]
}

/**
 * The last shape met with each number of keys: a table's rows come one after the other, so the
 * shape of a row is most often that of the row before it. Comparing its keys (strings that the
 * msgpack decoder made once per structure, so mostly the same strings) costs less than sorting
 * them and looking each key's JSON up.
 */
const SHAPES: Array<ObjectShape | undefined> = []
/** Objects with more keys than this are not kept as shapes (a map by id, say: keys are data). */
const SHAPE_MAX_KEYS = 64

function shapeOf(keys: string[]): ObjectShape {
  const known = keys.length <= SHAPE_MAX_KEYS ? SHAPES[keys.length] : undefined
  if (known !== undefined) {
    const knownKeys = known.keys
    let same = true
    for (let i = 0; i < keys.length; i++) {
      if (keys[i] !== knownKeys[i]) {
        same = false
        break
      }
    }
    if (same) return known
  }
  const sorted = [...keys].sort()
  const shape: ObjectShape = { keys, sorted, names: sorted.map((k, i) => `${i === 0 ? '' : ','}${JSON.stringify(k)}:`) }
  if (keys.length <= SHAPE_MAX_KEYS) SHAPES[keys.length] = shape
  return shape
}

/** The object's canonical JSON when some of its properties are left out (undefined, functions, symbols). */
function canonicalObjectSkipping(object: Record<string, unknown>, sorted: string[]): string {
  let out = ''
  for (const k of sorted) {
    const v = object[k]
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue
    out += `${out === '' ? '' : ','}${JSON.stringify(k)}:${canonicalJson(v)}`
  }
  return `{${out}}`
}
