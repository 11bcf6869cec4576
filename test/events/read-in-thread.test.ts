import t from 'tap'
import { JetStreamLog } from '../../src/events/jetstream-log.js'
import { ReaderThread, readerThreadOptions } from '../../src/events/read-in-thread.js'
import { startNats } from '../../harness/nats-server.js'
import { usageEvents } from './log-suite.js'

const nats = await startNats()
t.teardown(() => nats.stop())

t.test('reader thread: a batch goes as soon as the reader waits for one, once it holds a tenth of `batch`', async (t) => {
  const names = { stream: 'EARLY', subjectPrefix: 'early' }
  const log = await JetStreamLog.connect({ servers: nats.url, replicas: 1, ...names })
  t.teardown(() => log.close())
  await log.append(usageEvents(5000))
  const thread = ReaderThread.start(readerThreadOptions({ servers: nats.url, stream: names.stream, name: 'early' }))
  const sizes: number[] = []
  const seqs: number[] = []
  // Fetches of 500, batches of at most 4,000: nothing is applied yet when the first fetch ends,
  // so its 500 events (at least 400, a tenth) go at once instead of after seven more fetches.
  const last = await thread.read({ from: 1, to: 5000, batch: 4000, fetchMax: 500 }, (batch) => {
    sizes.push(batch.length)
    for (const { seq } of batch) seqs.push(seq)
  })
  t.equal(last, 5000, 'resolves with the last seq delivered')
  t.equal(sizes[0], 500, 'the first batch is the first fetch')
  t.ok(
    sizes.every((size) => size <= 4000 && size >= 400),
    `every batch holds a tenth of \`batch\` to all of it: ${sizes}`,
  )
  t.same(
    seqs,
    Array.from({ length: 5000 }, (_, i) => i + 1),
    'every event once, in order',
  )
})
