/**
 * Writes the replay bench's history into a nats-server of its own and leaves it running, so that
 * paired runs of `tollgate replay` (two trees) and the raw read can share one stream:
 * `node --import tsx bench/keep-stream.ts '{"storeDir":DIR,"size":N,"hours":H}'` prints the server's
 * URL and stays until killed (SIGTERM stops the server; the store is kept for a later start).
 */
import { jetstream } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import { encodeEvent } from '../src/events/codec.js'
import { JetStreamLog } from '../src/events/jetstream-log.js'
import { subjectOf } from '../src/events/types.js'
import { startNats } from '../harness/nats-server.js'
import { history, spreadStepMs } from './lib/replay-history.js'

const opts = JSON.parse(process.argv[2] ?? '{}') as { storeDir: string; size: number; hours?: number; spreadAt?: number; accounts?: number }
const accounts = opts.accounts ?? 2000
const nats = await startNats({ storeDir: opts.storeDir })
const log = await JetStreamLog.connect({ servers: nats.url, stream: 'TOLLGATE', subjectPrefix: 'tollgate', replicas: 1 })
await log.close()
const nc = await connect({ servers: nats.url })
const js = jetstream(nc, { timeout: 30_000 })
const have = (await (await js.jetstreamManager()).streams.info('TOLLGATE')).state.messages
const stepMs = opts.hours === undefined ? undefined : spreadStepMs({ accounts }, opts.spreadAt ?? opts.size, opts.hours)
const events = history({ accounts, stepMs })
for (let n = 0; n < have; n++) events.next()
const inFlight = new Set<Promise<unknown>>()
for (let n = have; n < opts.size; n++) {
  const event = events.next().value!
  const ack: Promise<unknown> = js.publish(subjectOf(event), encodeEvent(event), { msgID: event.id }).finally(() => inFlight.delete(ack))
  inFlight.add(ack)
  if (inFlight.size >= 4096) await Promise.race(inFlight)
}
await Promise.all(inFlight)
await nc.close()
process.stdout.write(`${JSON.stringify({ url: nats.url, size: opts.size, stepMs: stepMs ?? null })}\n`)
process.on('SIGTERM', () => void nats.kill().then(() => process.exit(0)))
setInterval(() => {}, 1 << 30)
