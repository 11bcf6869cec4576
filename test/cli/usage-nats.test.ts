import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { connect } from '@nats-io/transport-node'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { TEST_SECRET } from '../helpers/gateway.js'
import { begun, runCli } from '../helpers/cli.js'
import { subjectOf, type TollgateEvent } from '../../src/events/types.js'
import { callWithTwoKeys, replayCommand, startGatewayOnNats, sumsOf, usageFromEventsCommand, usageJson } from './usage-scenario.js'

// `tollgate usage` on a real nats-server, with a stream that also holds events as the codec
// wrote them before integer fields were msgpack integers (float64 timestamps, from 2023): the
// figures are the sums of UsageRecorded in the stream, old and new, before and after a replay.
t.setTimeout(240_000)
const { tg, nats } = await startGatewayOnNats(t)
const env = { TOLLGATE_SECRET: TEST_SECRET }

// The old bytes go to the stream as they are, by a plain NATS client, as an old gateway sent them.
const fixture = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'events', 'fixtures', 'float-timestamps.json'), 'utf8')) as {
  events: Array<{ hex: string; event: TollgateEvent }>
}
const nc = await connect({ servers: nats.url })
const js = jetstream(nc)
const oldSeqs: number[] = []
for (const { hex, event } of fixture.events) {
  oldSeqs.push((await js.publish(subjectOf(event), Buffer.from(hex, 'hex'), { msgID: event.id })).seq)
}
const [a, b] = await callWithTwoKeys(tg)
// The commands that only read the stream once the calls are counted run at once, each checked by
// its test below (the replay's test runs its own after the gateway stopped).
const plainRun = begun(usageJson(tg.configPath))
const byHourRun = begun(runCli(['usage', '--config', tg.configPath, '--json', '--by', 'hour'], env))
const refusedRun = begun(runCli(['usage', '--config', tg.configPath, '--since', '2023-11-14'], env))
const events = await usageFromEventsCommand(tg.configPath)

t.test('the stream holds the old bytes as they were sent', async (t) => {
  const jsm = await jetstreamManager(nc)
  for (const [i, seq] of oldSeqs.entries()) {
    const stored = await jsm.streams.getMessage(tg.config.events.stream, { seq })
    t.equal(Buffer.from(stored!.data).toString('hex'), fixture.events[i]!.hex)
  }
})

t.test('usage --json: the sums of UsageRecorded in the stream, old and new events alike', async (t) => {
  const lines = await plainRun
  t.same(lines, sumsOf(events))
  t.same(lines.map((l) => l.keyId).sort(), ['k1', a!.keyId, b!.keyId].sort(), 'the key of the old event and the two keys called')
  t.match(
    lines.find((l) => l.keyId === a!.keyId),
    { requests: 11, errors: 1 },
  )
  t.match(
    lines.find((l) => l.keyId === b!.keyId),
    { requests: 4, errors: 1 },
  )
  t.match(
    lines.find((l) => l.keyId === 'k1'),
    { accountId: 'acc-1', requests: 12, errors: 1, bytesIn: 300, bytesOut: 4_000_000_000 },
    'the 2023 event, float timestamps and all',
  )
})

t.test('hours older than those kept are in the totals, and --by says where its periods start', async (t) => {
  const [out, refused] = await Promise.all([byHourRun, refusedRun])
  t.equal(out.code, 0, out.stderr)
  const recent = events.filter((e) => e.keyId !== 'k1')
  t.same(
    out.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l)),
    sumsOf(recent, { by: 'hour' }),
  )
  t.match(out.stderr, /note: periods start at .*: usage by hour is kept for the last 35 days/)
  t.equal(refused.code, 1)
  t.match(refused.stderr, /UsageReportError: --since 2023-11-14T00:00:00.000Z falls before .*leave out --since and --until/)
})

t.test('after a replay of the stream, old events included, the same figures', async (t) => {
  await tg.stop()
  await nc.close()
  const after = await usageFromEventsCommand(tg.configPath)
  t.same(after, events, 'the gateway appended no usage since')
  await replayCommand(tg.configPath)
  const [plain, byDay] = await Promise.all([usageJson(tg.configPath), usageJson(tg.configPath, ['--by', 'day', '--account', a!.accountId])])
  t.same(plain, sumsOf(after))
  t.same(
    byDay,
    sumsOf(
      after.filter((e) => e.accountId === a!.accountId),
      { by: 'day' },
    ),
  )
})
