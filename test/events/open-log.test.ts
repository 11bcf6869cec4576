import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { openEventLog } from '../../src/events/open-log.js'
import { startNats } from '../../harness/nats-server.js'
import { usageEvents } from './log-suite.js'

t.test('without events.nats: the embedded log in <dataDir>/log', async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'tollgate-open-log-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const config = { stream: 'TOLLGATE', subjectPrefix: 'tollgate', replicas: 1 }
  const log = await openEventLog(config, dataDir)
  await log.append(usageEvents(2))
  await log.close()
  const again = await openEventLog(config, dataDir)
  t.equal(again.kind, 'embedded')
  t.equal(await again.lastSeq(), 2, 'the same log is found again in dataDir')
  await again.close()
})

t.test('with events.nats: JetStream, with the configured stream and subjects', async (t) => {
  const nats = await startNats()
  t.teardown(() => nats.stop())
  const log = await openEventLog({ nats: nats.url, stream: 'TG', subjectPrefix: 'tg', replicas: 1 }, '/nonexistent')
  t.teardown(() => log.close())
  t.equal(log.kind, 'jetstream')
  await log.append(usageEvents(1))
  t.equal(await log.lastSeq(), 1)
})
