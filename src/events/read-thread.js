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
// workerData: { servers, name, stream, from, to, batch, fetchMax, timeoutMs }
// To the parent: { type: 'batch', bytes, used, seqs, ends, count } (buffers transferred),
// { type: 'fetched', got } after each fetch, then { type: 'end' } or { type: 'error', message }.
// From the parent: 'more' (it took a batch: one more may be sent), 'stop' (end now).
import { parentPort, workerData } from 'node:worker_threads'
import { connect } from '@nats-io/transport-node'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'

const { servers, name, stream, from, to, batch, fetchMax, timeoutMs } = workerData

/** Batches the parent will take now: one ahead of the one it applies, so memory holds about two. */
let credit = 1
let stopped = false
/** Wakes the reader waiting for credit (or for the stop). */
let wake = () => {}
parentPort.on('message', (message) => {
  if (message === 'more') credit++
  else if (message === 'stop') stopped = true
  wake()
})

/** Encoded events with their seqs, in one buffer (the layout of EventBatch, src/events/event-batch.ts). */
class Batch {
  used = 0
  count = 0

  /** `bytes`: room to start with (about what the batch before took: little growing on the way). */
  constructor(bytes) {
    this.bytes = new Uint8Array(bytes)
    this.seqs = new Float64Array(Math.min(batch, to - from + 1))
    this.ends = new Uint32Array(Math.min(batch, to - from + 1))
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
      if (b.count >= batch || (end && b.count > 0)) {
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
  await read(nc)
  if (!stopped) parentPort.postMessage({ type: 'end' })
} catch (err) {
  parentPort.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) })
} finally {
  await nc?.close().catch(() => undefined)
  parentPort.close()
}
