import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { startNats } from '../../harness/nats-server.js'
import { parseConfig } from '../../src/config/load.js'
import { JetStreamLog } from '../../src/events/jetstream-log.js'
import type { TollgateEvent } from '../../src/events/types.js'
import { UsageNotInStore } from '../../src/projections/errors.js'
import { Projector } from '../../src/projections/projector.js'
import { replay } from '../../src/projections/replay.js'
import { usageSkipped } from '../../src/projections/usage-mode.js'
import { StateStore } from '../../src/store/state-store.js'
import { usageTotals } from '../../src/usage/usage-queries.js'
import { runCli } from '../helpers/cli.js'
import { waitFor } from '../helpers/eventually.js'
import { TEST_SECRET } from '../helpers/gateway.js'
import { openLedger } from '../helpers/ledger.js'
import { accountWithKey, rateLimitedEvent, T0, tempDir, usageEvent } from './fixtures.js'

// `usage.project` false: the projector reads past usage events (they move its checkpoint and
// nothing else), does not read usage partitions, and marks the store so that a projector that
// projects usage refuses it until a replay rebuilds it.
t.setTimeout(120_000)

const WALLET = '0x' + '34'.repeat(20)
const NONE = { requests: 0, errors: 0, bytesIn: 0, bytesOut: 0, units: 0, rateLimited: 0, notifications: 0 }

/** An account with a key, then 30 intervals of its usage and a rate limit: 34 events. */
function history(accountId = 'acc_u'): { events: TollgateEvent[]; keyHash: string; requests: number } {
  const a = accountWithKey(accountId, WALLET)
  const events: TollgateEvent[] = [...a.events]
  let requests = 0
  for (let i = 0; i < 30; i++) {
    events.push(usageEvent({ accountId, keyId: a.key.keyId, intervalStart: T0 + i * 1000, requests: 5 + i }))
    requests += 5 + i
  }
  events.push(rateLimitedEvent(accountId, a.key.keyId, T0, 4))
  return { events, keyHash: a.key.keyHash, requests }
}

t.test('catching up without usage: keys and plans are applied, usage only moves the checkpoint', async (t) => {
  const { log, store, projector } = await openLedger(t, { projector: { batch: 7, usage: false } })
  const { events, keyHash } = history()
  await log.append(events)
  t.equal(await projector.catchUp(), events.length, 'every event is read, usage included')
  t.equal(store.checkpoint(), events.length)
  t.ok(store.keyByHash(keyHash), 'the key is projected')
  t.same(usageTotals(store, { accountId: 'acc_u' }), NONE, 'no usage is projected')
  t.ok(usageSkipped(store), 'the store is marked as built without usage')
})

t.test('a store built without usage is refused by a projector of usage, until a replay rebuilds it', async (t) => {
  const { log, store, projector } = await openLedger(t, { projector: { usage: false } })
  const { events, requests } = history()
  await log.append(events)
  await projector.catchUp()
  t.throws(() => new Projector(store, log), UsageNotInStore)
  t.match(
    (() => {
      try {
        new Projector(store, log)
      } catch (err) {
        return (err as Error).message
      }
    })(),
    /usage\.project false.*tollgate replay/,
    'the error says what happened and what to do',
  )
  // Without usage again, the store is fine.
  t.doesNotThrow(() => new Projector(store, log, { usage: false }))
  await replay(store, log)
  t.notOk(usageSkipped(store), 'the replay wiped the mark')
  t.equal(usageTotals(store, { accountId: 'acc_u' }).requests, requests, 'the replay projected the usage')
  t.doesNotThrow(() => new Projector(store, log))
})

t.test('a replay without usage gives the state of a projector without usage', async (t) => {
  const dir = tempDir(t, 'usage-not-projected-replay')
  const { log, store, projector } = await openLedger(t, { projector: { usage: false } })
  const { events, keyHash } = history()
  await log.append(events)
  await projector.catchUp()
  const rebuilt = StateStore.open(join(dir, 'state'))
  t.teardown(() => rebuilt.close())
  const out = await replay(rebuilt, log, { usage: false })
  t.equal(out.events, events.length)
  t.ok(rebuilt.keyByHash(keyHash))
  t.same(usageTotals(rebuilt, { accountId: 'acc_u' }), NONE)
  t.ok(usageSkipped(rebuilt))
  t.equal(rebuilt.checkpoint(), store.checkpoint())
})

t.test('following without usage: usage appended later moves the checkpoint, a key appended later is applied', async (t) => {
  const { log, store, projector } = await openLedger(t, { projector: { usage: false, usageCommitMs: 0 } })
  const first = history('acc_f')
  await log.append(first.events)
  projector.start()
  await waitFor(() => store.checkpoint() === first.events.length, 'the follower applies what the log holds')
  const more = history('acc_g')
  await log.append(more.events)
  await waitFor(() => store.checkpoint() === first.events.length + more.events.length, 'the follower reads past the later usage')
  t.ok(store.keyByHash(more.keyHash))
  t.same(usageTotals(store, { accountId: 'acc_f' }), NONE)
  t.same(usageTotals(store, { accountId: 'acc_g' }), NONE)
})

t.test('with usage partitions, a projector without usage reads the log alone', async (t) => {
  const nats = await startNats()
  t.teardown(() => nats.stop())
  const log = await JetStreamLog.connect({ servers: nats.url, replicas: 1, partitions: 2, stream: 'UNP', subjectPrefix: 'unp' })
  t.teardown(() => log.close())
  const { events, keyHash, requests } = history()
  await log.append(events)
  const usageEvents = events.filter((e) => e.type === 'UsageRecorded').length
  const dir = tempDir(t, 'usage-not-projected-partitions')
  const skipping = StateStore.open(join(dir, 'skipping'))
  const projecting = StateStore.open(join(dir, 'projecting'))
  t.teardown(() => {
    skipping.close()
    projecting.close()
  })
  const without = new Projector(skipping, log, { usage: false })
  const withUsage = new Projector(projecting, log)
  t.equal(await without.catchUp(), events.length - usageEvents, 'the log alone: its events but the partitioned usage')
  t.equal(await without.held(), events.length - usageEvents, 'what it counts as held is the log alone')
  t.ok(without.caughtUp())
  t.ok(skipping.keyByHash(keyHash))
  t.same(usageTotals(skipping, { accountId: 'acc_u' }), NONE)
  await withUsage.catchUp()
  t.equal(withUsage.applied(), events.length, 'a projector of usage reads the partitions too')
  t.equal(usageTotals(projecting, { accountId: 'acc_u' }).requests, requests)
})

t.test('usage.project false without NATS is refused when the configuration is read', async (t) => {
  t.throws(() => parseConfig({ usage: { project: false }, networks: {} }, 'test'), {
    message: /\/usage\/project is false, but events\.nats is not set.*set events\.nats, or remove usage\.project/,
  })
  t.equal(parseConfig({ networks: {} }, 'test').usage.project, true, 'default true')
  t.equal(parseConfig({ usage: { project: false }, events: { nats: 'nats://127.0.0.1:4222' }, networks: {} }, 'test').usage.project, false)
})

t.test('`tollgate usage` on the config of an instance that does not project usage says so and where to look', async (t) => {
  const nats = await startNats()
  t.teardown(() => nats.stop())
  const dir = tempDir(t, 'usage-not-projected-cli')
  const configPath = join(dir, 'config.json')
  const config = { dataDir: join(dir, 'data'), events: { nats: nats.url, stream: 'UNPCLI', subjectPrefix: 'unpcli' }, usage: { project: false }, networks: {} }
  writeFileSync(configPath, JSON.stringify(config))
  const created = await runCli(['accounts', 'create', '--config', configPath, '--wallet', WALLET, '--plan', 'free-trial'], { TOLLGATE_SECRET: TEST_SECRET })
  t.equal(created.code, 0, created.stderr)
  const out = await runCli(['usage', '--config', configPath], { TOLLGATE_SECRET: TEST_SECRET })
  t.not(out.code, 0, 'it fails')
  t.match(out.stderr, /usage\.project false, so its data folder holds no usage: run tollgate usage with the config of an instance that projects usage/)
  writeFileSync(configPath, JSON.stringify({ ...config, usage: { project: true } }))
  const refused = await runCli(['usage', '--config', configPath], { TOLLGATE_SECRET: TEST_SECRET })
  t.not(refused.code, 0, 'the store the first run marked is refused to a projector of usage')
  t.match(refused.stderr, /was built by an instance that did not project usage.*tollgate replay/)
  const rebuilt = await runCli(['replay', '--config', configPath], { TOLLGATE_SECRET: TEST_SECRET })
  t.equal(rebuilt.code, 0, rebuilt.stderr)
  const after = await runCli(['usage', '--config', configPath, '--json'], { TOLLGATE_SECRET: TEST_SECRET })
  t.equal(after.code, 0, after.stderr)
})
