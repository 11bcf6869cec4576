/**
 * The rival of `tollgate replay`: a plain ordered consumer that reads a JetStream stream from its
 * first message to its last and decodes every event (what any consumer of the stream must do, and
 * the most a replay could reach). Nothing is kept.
 *
 * Run as its own process: `node --import tsx bench/scenarios/raw-read.ts '{"nats":URL,"stream":NAME}'`;
 * prints `{"events":N,"readMs":T,"maxRssMiB":M}` (readMs: from the connection to the last event).
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { decodeEvent } from '../../src/events/codec.js'

const opts = JSON.parse(process.argv[2] ?? '{}') as { nats: string; stream: string }
const t0 = performance.now()
const nc = await connect({ servers: opts.nats })
const last = (await (await jetstreamManager(nc)).streams.info(opts.stream)).state.last_seq
// No name: an ordered consumer (ephemeral, flow-controlled, redelivers nothing, in stream order).
const consumer = await jetstream(nc).consumers.get(opts.stream)
const messages = await consumer.consume({ max_messages: 5_000 })
let events = 0
let types = 0
for await (const m of messages) {
  // Touch what was decoded, so that no engine could skip the work.
  types += decodeEvent(m.data).type.length
  events++
  if (m.seq >= last) break
}
const readMs = performance.now() - t0
await nc.close()
process.stdout.write(JSON.stringify({ events, readMs: Math.round(readMs), maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024), types }) + '\n')
process.exit(0)
