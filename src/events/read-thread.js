// A JetStream reader in a worker thread, for JetStreamLog.readAll over a long range (a replay).
//
// Why a thread: reading the stream is the NATS client's work (parsing the protocol, a message
// object per event): about half of a replay's time on one thread. Here it runs on another core
// while the projector applies the previous batch, and only bytes cross over: each batch is one
// buffer of the events' encoded bytes with their seqs and where each ends (the layout of
// EventBatch), transferred, not copied.
//
// Plain JavaScript that imports only the NATS client: a worker thread has no TypeScript loader.
//
// workerData: { servers, name, stream, timeoutMs }: it connects at once, then waits to be told
// what to read.
// From the parent: { type: 'read', from, to, batch, fetchMax } (once), { type: 'more', bytes,
// seqs, ends } (it applied a batch and hands its buffers back, transferred: one more batch may be
// sent, and is filled into them), 'stop' (end now).
// To the parent: { type: 'batch', bytes, used, seqs, ends, count } (buffers transferred),
// { type: 'fetched', got } after each fetch, then { type: 'end' } or { type: 'error', message }.
import { parentPort, workerData } from 'node:worker_threads'
import { connect } from '@nats-io/transport-node'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'

const { servers, name, stream, timeoutMs } = workerData
/** What to read, once the parent says ({ from, to, batch, fetchMax }). */
let range
/** Wakes the thread waiting to be told what to read (or to stop). */
let told = () => {}

/** Batches the parent will take now: one ahead of the one it applies, so memory holds about two. */
let credit = 1
let stopped = false
/**
 * Buffers of batches the parent has applied, handed back for the next batches. Why: a batch of
 * 100,000 events is ~28 MB outside the heap, and the parent's copy of an applied batch was freed
 * only by a full collection: three or four of them were alive at once (peak RSS 358-390 MiB at
 * 1,000,000 events). Handed back, the parent's copy is gone at once and no batch is allocated
 * anew: two batches' buffers in all.
 */
const spare = []
/** Wakes the reader waiting for credit (or for the stop). */
let wake = () => {}
parentPort.on('message', (message) => {
  if (message === 'stop') stopped = true
  else if (message?.type === 'read') range = message
  else if (message?.type === 'more') {
    credit++
    if (message.bytes) spare.push(message)
  }
  wake()
  told()
})

/** Encoded events with their seqs, in one buffer (the layout of EventBatch, src/events/event-batch.ts). */
class Batch {
  used = 0
  count = 0

  /** `bytes`: room to start with (about what the batch before took: little growing on the way); buffers the parent handed back first. */
  constructor(bytes) {
    const { from, to, batch } = range
    const events = Math.min(batch, to - from + 1)
    const reused = spare.pop()
    this.bytes = new Uint8Array(reused !== undefined && reused.bytes.byteLength >= bytes ? reused.bytes : new ArrayBuffer(bytes))
    this.seqs = reused !== undefined && reused.seqs.byteLength >= events * 8 ? new Float64Array(reused.seqs) : new Float64Array(events)
    this.ends = reused !== undefined && reused.ends.byteLength >= events * 4 ? new Uint32Array(reused.ends) : new Uint32Array(events)
  }

  push(seq, data) {
    if (this.used + data.length > this.bytes.length) {
      const bigger = new Uint8Array(Math.max(this.used + data.length, this.bytes.length * 2))
      bigger.set(this.bytes.subarray(0, this.used))
      this.bytes = bigger
    }
    this.bytes.set(data, this.used)
    this.used += data.length
    this.seqs[this.count] = seq
    this.ends[this.count] = this.used
    this.count++
  }
}

/** Hand a full batch over (its buffers move to the parent), once the parent will take it. */
async function send(b) {
  while (credit === 0 && !stopped) await new Promise((resolve) => (wake = resolve))
  if (stopped) return
  credit--
  const { bytes, seqs, ends, used, count } = b
  parentPort.postMessage({ type: 'batch', bytes: bytes.buffer, used, seqs: seqs.buffer, ends: ends.buffer, count }, [bytes.buffer, seqs.buffer, ends.buffer])
}

async function read(nc) {
  const { from, to, batch, fetchMax } = range
  const early = Math.ceil(batch / 10)
  const consumer = await jetstream(nc, { timeout: timeoutMs }).consumers.get(stream, { opt_start_seq: from })
  try {
    let last = from - 1
    let empty = 0
    // About 250 bytes an event: room for a batch of small ones at first, then what the last one took.
    let b = new Batch(Math.min(1 << 20, batch * 512))
    while (!stopped) {
      const want = Math.min(fetchMax, batch - b.count, to - last)
      const messages = await consumer.fetch({ max_messages: want, expires: timeoutMs / 2 })
      let got = 0
      let atEnd = false
      for await (const m of messages) {
        b.push(m.seq, m.data)
        last = m.seq
        got++
        atEnd = m.info.pending === 0
        if (got >= want || atEnd) break
      }
      // A sign of life for the parent's time-out, which counts from its last message.
      parentPort.postMessage({ type: 'fetched', got })
      // An empty fetch: its request expired, or the stream ends before `to`.
      empty = got === 0 ? empty + 1 : 0
      let end = last >= to || atEnd
      if (!end && got === 0) end = (await (await jetstreamManager(nc)).streams.info(stream)).state.last_seq <= last
      if (!end && empty >= 3) throw new Error(`stream ${stream} sent nothing after seq ${last} in three fetches although it holds more`)
      // A batch also goes as soon as the parent waits for one (credit), once it holds a tenth of
      // `batch`: filled to `batch` first, the parent had nothing to apply until then (a replay of
      // 100,000 events in one batch read them all, then applied them all: no overlap at all).
      // Its transactions are then about what was read while it applied the one before; the tenth
      // bounds how many more transactions (each writes its records once) a slow read makes.
      if (b.count >= batch || (end && b.count > 0) || (credit > 0 && b.count >= early)) {
        await send(b)
        b = new Batch(Math.ceil(b.used * 1.125))
      }
      if (end) return
    }
  } finally {
    // Ordered consumers are ephemeral, but would linger on the server for minutes.
    await consumer.delete().catch(() => undefined)
  }
}

let nc
try {
  nc = await connect({ servers, name, timeout: timeoutMs, maxReconnectAttempts: 0 })
  while (range === undefined && !stopped) await new Promise((resolve) => (told = resolve))
  if (!stopped) await read(nc)
  if (!stopped) parentPort.postMessage({ type: 'end' })
} catch (err) {
  parentPort.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) })
} finally {
  await nc?.close().catch(() => undefined)
  parentPort.close()
}
