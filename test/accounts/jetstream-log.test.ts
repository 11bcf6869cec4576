import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { FakeClock } from '../helpers/fake-clock.js'
import { waitFor } from '../helpers/eventually.js'
import { createAccount, regenerateKey, type AccountCommandDeps } from '../../src/accounts/commands.js'
import { JetStreamLog } from '../../src/events/jetstream-log.js'
import { makeEvent } from '../../src/events/make-event.js'
import type { UsageRecorded } from '../../src/events/types.js'
import { hashApiKey } from '../../src/keys/api-key.js'
import { KeyCipher } from '../../src/keys/key-cipher.js'
import { loadPlanCatalog } from '../../src/plans/catalog.js'
import { Projector } from '../../src/projections/projector.js'
import { replay, stateDigest } from '../../src/projections/replay.js'
import { StateStore } from '../../src/store/state-store.js'
import { startNats } from '../../harness/nats-server.js'
import { usageTotals } from '../../src/usage/usage-queries.js'

/** The same commands and projections on JetStream: a CLI connection appends, a gateway connection follows. */
t.test('on JetStream: create, regenerate and usage reach a following store; replay gives the same digest', async (t) => {
  const nats = await startNats()
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-js-accounts-'))
  const logOpts = { servers: nats.url, stream: 'TOLLGATE_TEST', subjectPrefix: 'tollgate', replicas: 1 }
  const cliLog = await JetStreamLog.connect({ ...logOpts, name: 'cli' })
  const gatewayLog = await JetStreamLog.connect({ ...logOpts, name: 'gateway' })
  const cliStore = StateStore.open(join(dir, 'cli-state'))
  const gatewayStore = StateStore.open(join(dir, 'gateway-state'))
  const follower = new Projector(gatewayStore, gatewayLog)
  t.teardown(async () => {
    await follower.stop()
    await Promise.all([cliStore.close(), gatewayStore.close()])
    await Promise.all([cliLog.close(), gatewayLog.close()])
    await nats.stop()
    rmSync(dir, { recursive: true, force: true })
  })
  follower.start()
  /**
   * Bounded wait for the following store to reach a state, polled (a hook on each applied batch
   * would miss a batch that touches no key nor account: usage only calls no onApplied). The 10 s
   * is a bound, not a timing assertion: on 2 loaded cores a follow round trip has taken over 2 s.
   */
  const reached = (done: () => boolean) => waitFor(done, 'the following store to apply the change', 10_000)

  const clock = new FakeClock()
  const deps: AccountCommandDeps = {
    log: cliLog,
    store: cliStore,
    clock,
    catalog: loadPlanCatalog('default'),
    cipher: KeyCipher.fromSecret('test-secret-of-a-decent-length-0123456789'),
    projector: new Projector(cliStore, cliLog),
  }
  const created = await createAccount(deps, { wallet: '0x' + 'c0'.repeat(20), planId: 'tier-2', nodes: [{ network: 'eth-1', kind: 'full' }] })
  t.ok(cliStore.keyByHash(hashApiKey(created.apiKey)), 'the command sees its own write')
  await t.resolves(
    reached(() => gatewayStore.keyByHash(hashApiKey(created.apiKey)) !== undefined),
    'the gateway store gets the key',
  )

  clock.advance(1_000)
  const regen = await regenerateKey(deps, { accountId: created.accountId })
  const oldHash = hashApiKey(created.apiKey)
  await t.resolves(
    reached(() => gatewayStore.keyByHash(oldHash)?.revokedAt === clock.now()),
    'the old key is revoked there',
  )
  t.equal(gatewayStore.account(created.accountId)?.activeKeyId, regen.keyId)

  const usage = makeEvent<UsageRecorded>(
    {
      type: 'UsageRecorded',
      accountId: created.accountId,
      keyId: regen.keyId,
      network: 'eth-1',
      kind: 'full',
      instance: 'gw-a',
      intervalStart: clock.now(),
      intervalMs: 10_000,
      requests: 17,
      errors: 1,
      bytesIn: 300,
      bytesOut: 4_000,
      units: 442,
    },
    clock.now() + 10_000,
  )
  await cliLog.append([usage])
  await gatewayLog.append([usage]) // the same fact re-sent by another connection: msgID dedup
  const lastSeq = await cliLog.lastSeq()
  t.equal(lastSeq, 7, '4 events to create, 2 to regenerate, the usage once')
  await new Projector(cliStore, cliLog).catchUp()
  await t.resolves(reached(() => gatewayStore.checkpoint() === lastSeq))
  t.same(usageTotals(gatewayStore), { requests: 17, errors: 1, bytesIn: 300, bytesOut: 4_000, rateLimited: 0, notifications: 0, units: 442 })

  const digest = stateDigest(cliStore)
  t.equal(stateDigest(gatewayStore), digest, 'two stores of one log agree')
  await follower.stop()
  await gatewayStore.close()
  rmSync(join(dir, 'gateway-state'), { recursive: true, force: true })
  t.same(await replay(join(dir, 'gateway-state'), gatewayLog), { events: await gatewayLog.lastSeq(), digest })
})
