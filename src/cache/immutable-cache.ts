import { hash } from 'node:crypto'
import { mkdirSync, rmSync } from 'node:fs'
import { open, type Database, type RootDatabase } from 'lmdb'

export interface ImmutableCacheOptions {
  /** Bytes of stored answers above which the oldest are evicted (the LMDB file is somewhat larger). */
  maxBytes: number
}

/** Counters for /metrics (this process's view; size and entries are the shared store's). */
export interface CacheStats {
  hits: number
  misses: number
  stores: number
  evictions: number
  /** Bytes of answers stored (all processes). */
  bytes: number
  entries: number
}

interface Entry {
  /** The node's answer text, with the id of the client whose call filled the entry. */
  body: string
  /** Insertion order, the eviction queue's key. */
  seq: number
}

/**
 * The hot layer: answers read or stored lately by this process, in memory, so that a hot entry
 * (eth_chainId in every batch a client library sends, the blocks an indexer re-reads) costs a Map
 * lookup instead of a hash, an LMDB read and a msgpack decode (25 cache hits in a batch of 50
 * were the largest cost of the batch path: bench/README.md). Bounded by entries and bytes; big
 * answers stay in LMDB only. Immutable answers under a generation in the key: never stale. At
 * most a quarter of the cache's own bound, so that it never holds much the cache has evicted.
 */
const HOT_MAX_ENTRIES = 10_000
const HOT_MAX_BYTES = 32 * 1024 * 1024
const HOT_MAX_ENTRY_BYTES = 64 * 1024

/** Keys the recent hits remember, for the eviction's second chance. */
const RECENT_HITS_MAX = 50_000
/** Eviction goes down to this share of maxBytes, so that it runs in batches rather than on every put. */
const LOW_WATER = 0.9

/**
 * Answers that can no longer change (blocks, receipts and logs at or below the finalized block,
 * state by block hash, the chain id), in an LMDB environment of their own under dataDir: every
 * gateway process on the host opens the same folder, so one process's miss is the others' hit.
 *
 * Entries are keyed by a SHA-256 of (network, generation, method, params): bumping a network's
 * generation (after a reorg below the finalized block) makes all its entries unreachable at once,
 * and eviction removes them in time. Eviction is by insertion order with a second chance for
 * entries hit since they were stored (an approximate LRU that costs no write on a hit).
 *
 * The folder is a cache: it is not part of the state that replay rebuilds; deleting it (gateways
 * stopped) loses nothing but hits. When opening it throws (an LMDB version change), it is made anew.
 */
export class ImmutableCache {
  readonly path: string
  readonly #root: RootDatabase
  readonly #entries: Database<Entry, Buffer>
  readonly #order: Database<Buffer, number>
  readonly #meta: Database<number, string>
  readonly #maxBytes: number
  readonly #recentHits = new Set<string>()
  /** `${network}\0${generation}\0${call}` → answer and its LMDB key in base64, oldest first. */
  readonly #hot = new Map<string, { body: string; id: string }>()
  #hotBytes = 0
  readonly #generations = new Map<string, { gen: number; at: number }>()
  readonly #hotMaxBytes: number
  readonly #stats = { hits: 0, misses: 0, stores: 0, evictions: 0 }
  #evicting: Promise<void> | undefined
  #closed = false

  private constructor(path: string, root: RootDatabase, opts: ImmutableCacheOptions) {
    this.path = path
    this.#root = root
    this.#entries = root.openDB<Entry, Buffer>('entries', { encoding: 'msgpack', keyEncoding: 'binary' })
    this.#order = root.openDB<Buffer, number>('order', { encoding: 'binary', keyEncoding: 'uint32' })
    this.#meta = root.openDB<number, string>('meta', { encoding: 'msgpack' })
    this.#maxBytes = opts.maxBytes
    this.#hotMaxBytes = Math.min(HOT_MAX_BYTES, opts.maxBytes / 4)
  }

  /** Open the cache in folder `path`; when opening throws, the folder is deleted and made anew. */
  static open(path: string, opts: ImmutableCacheOptions): ImmutableCache {
    const attempt = () => {
      mkdirSync(path, { recursive: true })
      return new ImmutableCache(path, open({ path, maxDbs: 4 }), opts)
    }
    try {
      return attempt()
    } catch {
      rmSync(path, { recursive: true, force: true })
      return attempt()
    }
  }

  /** The generation of a network's entries (bumped when a reorg went below the finalized block). */
  generation(network: string): number {
    // Read from LMDB at most once per millisecond per network: another process's bump (after a
    // reorg below the finalized block) is seen within 1 ms, and a batch of cached calls does not
    // read it once per call.
    const now = Date.now()
    const known = this.#generations.get(network)
    if (known !== undefined && known.at === now) return known.gen
    const gen = this.#meta.get(`gen:${network}`) ?? 0
    this.#generations.set(network, { gen, at: now })
    return gen
  }

  /** Make every entry of `network` unreachable (shared with the other processes on the host). */
  async invalidate(network: string): Promise<number> {
    let gen = 0
    await this.#root.transaction(() => {
      gen = (this.#meta.get(`gen:${network}`) ?? 0) + 1
      void this.#meta.put(`gen:${network}`, gen)
    })
    this.#generations.delete(network)
    return gen
  }

  /** The stored answer for a call, counting a hit or a miss. */
  get(network: string, generation: number, call: string): string | undefined {
    if (this.#closed) return undefined
    const hotKey = `${network}\0${generation}\0${call}`
    const hot = this.#hot.get(hotKey)
    if (hot !== undefined) {
      // No reordering on a hit (it cost a delete and a set per hit): the hot layer drops its
      // oldest entries first, and a hot answer dropped is read from LMDB once and kept again.
      // The hit still counts for the LMDB eviction's second chance, shared with other processes.
      this.#stats.hits++
      if (this.#recentHits.size < RECENT_HITS_MAX) this.#recentHits.add(hot.id)
      return hot.body
    }
    const key = entryKey(hotKey)
    const entry = this.#entries.get(key)
    if (entry === undefined) {
      this.#stats.misses++
      return undefined
    }
    this.#stats.hits++
    // Remembered for the eviction's second chance (an entry evicted from LMDB while hot here is
    // still right: immutable; it is only no longer shared).
    const id = key.toString('base64')
    if (this.#recentHits.size < RECENT_HITS_MAX) this.#recentHits.add(id)
    this.#keepHot(hotKey, entry.body, id)
    return entry.body
  }

  /** Store an answer (asynchronously; the caller does not wait) and evict when over the bound. */
  put(network: string, generation: number, call: string, body: string): void {
    if (this.#closed || body.length > this.#maxBytes / 4) return // one huge answer must not flush the whole cache
    const hotKey = `${network}\0${generation}\0${call}`
    const key = entryKey(hotKey)
    this.#stats.stores++
    this.#keepHot(hotKey, body, key.toString('base64'))
    this.#root
      .transaction(() => {
        if (this.#entries.get(key) !== undefined) return // another process (or call) stored it first
        const seq = (this.#meta.get('seq') ?? 0) + 1
        void this.#meta.put('seq', seq)
        void this.#meta.put('bytes', (this.#meta.get('bytes') ?? 0) + body.length)
        void this.#meta.put('entries', (this.#meta.get('entries') ?? 0) + 1)
        void this.#entries.put(key, { body, seq })
        void this.#order.put(seq, key)
      })
      .then(
        () => {
          if ((this.#meta.get('bytes') ?? 0) > this.#maxBytes) void this.#evict()
        },
        () => {}, // a cache write that fails costs a later miss, nothing more
      )
  }

  /** Keep an answer in the hot layer, dropping the oldest beyond its bounds. */
  #keepHot(hotKey: string, body: string, id: string): void {
    if (body.length > HOT_MAX_ENTRY_BYTES || body.length > this.#hotMaxBytes || this.#hot.has(hotKey)) return
    this.#hot.set(hotKey, { body, id })
    this.#hotBytes += body.length
    while (this.#hot.size > HOT_MAX_ENTRIES || this.#hotBytes > this.#hotMaxBytes) {
      const [oldest, old] = this.#hot.entries().next().value as [string, { body: string }]
      this.#hot.delete(oldest)
      this.#hotBytes -= old.body.length
    }
  }

  stats(): CacheStats {
    return { ...this.#stats, bytes: this.#meta.get('bytes') ?? 0, entries: this.#meta.get('entries') ?? 0 }
  }

  /** Resolves when the writes issued so far are committed (tests, shutdown). */
  async flushed(): Promise<void> {
    await this.#root.committed
    await this.#evicting
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#hot.clear()
    await this.#evicting
    await this.#root.close()
  }

  /** Remove the oldest entries until the stored bytes are under the low-water mark. One run at a time. */
  #evict(): Promise<void> {
    this.#evicting ??= this.#root
      .transaction(() => {
        let bytes = this.#meta.get('bytes') ?? 0
        let entries = this.#meta.get('entries') ?? 0
        let seq = this.#meta.get('seq') ?? 0
        const target = this.#maxBytes * LOW_WATER
        // In batches read before they are changed: the cursor does not walk a range being rewritten.
        for (let round = 0; bytes > target && round < 1_000; round++) {
          const batch = [...this.#order.getRange({ limit: 1_000 })].map(({ key, value }) => ({ oldSeq: key, key: Buffer.from(value) }))
          if (batch.length === 0) break
          for (const { oldSeq, key } of batch) {
            if (bytes <= target) break
            void this.#order.remove(oldSeq)
            const entry = this.#entries.get(key)
            if (entry === undefined || entry.seq !== oldSeq) continue
            if (this.#recentHits.delete(key.toString('base64'))) {
              // Hit since it was stored: a second chance at the back of the queue.
              seq++
              void this.#entries.put(key, { body: entry.body, seq })
              void this.#order.put(seq, key)
              continue
            }
            void this.#entries.remove(key)
            bytes -= entry.body.length
            entries--
            this.#stats.evictions++
          }
        }
        void this.#meta.put('bytes', Math.max(0, bytes))
        void this.#meta.put('entries', Math.max(0, entries))
        void this.#meta.put('seq', seq)
      })
      .catch(() => {})
      .finally(() => {
        this.#evicting = undefined
      })
    return this.#evicting
  }
}

/** The LMDB key of `${network}\0${generation}\0${call}`: its SHA-256 (bounded, whatever the params). */
function entryKey(hotKey: string): Buffer {
  // One-shot: no Hash object (a native object with a weak handle) per cached call.
  return hash('sha256', hotKey, 'buffer') as unknown as Buffer
}
