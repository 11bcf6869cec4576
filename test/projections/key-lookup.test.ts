import t, { type Test } from 'tap'
import type { KeyIssued, KeyRevoked, NodesSelected, PlanEnded } from '../../src/events/types.js'
import { generateApiKey, hashApiKey } from '../../src/keys/api-key.js'
import { Projector } from '../../src/projections/projector.js'
import type { ProjectorChanges } from '../../src/projections/touched.js'
import { isKeyActive } from '../../src/store/records.js'
import { openLedger } from '../helpers/ledger.js'
import { accountWithKey, ev, T0 } from './fixtures.js'

const WALLET = '0x' + 'ab'.repeat(20)

async function setup(t: Test) {
  const changes: ProjectorChanges[] = []
  let onChange = () => {}
  const { log, store, projector } = await openLedger(t, {
    projector: {
      onApplied: (c) => {
        changes.push(c)
        onChange()
      },
    },
  })
  /** Resolves once onApplied has been called with changes that satisfy `done` (checked on each call). */
  const appliedUntil = (done: () => boolean) =>
    new Promise<void>((resolve) => {
      onChange = () => done() && resolve()
    })
  return { log, store, projector, changes, appliedUntil }
}

t.test('account, plan and key: the key is found by the hash of the clear key', async (t) => {
  const { log, store, projector, changes } = await setup(t)
  const { events, key } = accountWithKey('acc_1', WALLET)
  await log.append(events)
  await projector.catchUp()

  const record = store.keyByHash(hashApiKey(key.key))
  t.ok(record, 'key found by hash')
  t.equal(record!.keyId, key.keyId)
  t.equal(record!.accountId, 'acc_1')
  t.equal(record!.revokedAt, null)
  t.equal(store.keyById(key.keyId)?.keyHash, key.keyHash)
  t.equal(store.keyByHash(hashApiKey(generateApiKey().key)), undefined, 'another key is unknown')

  const account = store.account('acc_1')
  t.same(account, {
    accountId: 'acc_1',
    wallet: WALLET,
    createdAt: T0,
    plan: { planId: 'tier-1', startsAt: T0, endsAt: T0 + 30 * 86_400_000 },
    nodes: [],
    activeKeyId: key.keyId,
  })
  t.equal(store.accountByWallet(WALLET.toUpperCase().replace('0X', '0x'))?.accountId, 'acc_1', 'wallet lookup ignores case')
  t.equal(store.checkpoint(), 3)
  t.ok(projector.caughtUp())
  t.same(changes, [{ keyHashes: [key.keyHash], accountIds: ['acc_1'], penaltyKeys: [] }], 'onApplied names the key and the account')
})

t.test('regenerate: the old key is revoked from effectiveAt, the new one works, the account points at it', async (t) => {
  const { log, store, projector, changes } = await setup(t)
  const { events, key: oldKey } = accountWithKey('acc_1', WALLET)
  await log.append(events)
  await projector.catchUp()
  changes.length = 0

  const newKey = generateApiKey()
  const effectiveAt = T0 + 60_000
  await log.append([
    ev<KeyIssued>({ type: 'KeyIssued', accountId: 'acc_1', keyId: newKey.keyId, keyHash: newKey.keyHash, keyCipher: 'c2' }, T0 + 1),
    ev<KeyRevoked>({ type: 'KeyRevoked', accountId: 'acc_1', keyId: oldKey.keyId, reason: 'regenerated', effectiveAt }, T0 + 1),
  ])
  await projector.catchUp()

  const old = store.keyByHash(oldKey.keyHash)!
  t.equal(old.revokedAt, effectiveAt)
  t.ok(isKeyActive(old, effectiveAt - 1), 'old key still works during the grace period')
  t.notOk(isKeyActive(old, effectiveAt), 'old key stops at effectiveAt')
  t.ok(isKeyActive(store.keyByHash(newKey.keyHash)!, effectiveAt + 1e9), 'new key works')
  t.equal(store.account('acc_1')!.activeKeyId, newKey.keyId)
  t.same(changes, [{ keyHashes: [newKey.keyHash, oldKey.keyHash], accountIds: ['acc_1'], penaltyKeys: [] }])

  // A later "revoke now" wins over the grace period; a later, longer one never extends it.
  await log.append([ev<KeyRevoked>({ type: 'KeyRevoked', accountId: 'acc_1', keyId: newKey.keyId, reason: 'revoked', effectiveAt: T0 + 5 }, T0 + 5)])
  await projector.catchUp()
  t.equal(store.keyByHash(newKey.keyHash)!.revokedAt, T0 + 5)
  t.equal(store.account('acc_1')!.activeKeyId, null, 'no active key once the active one is revoked')
})

t.test('nodes and plan end are projected; events for unknown accounts are ignored', async (t) => {
  const { log, store, projector } = await setup(t)
  const { events } = accountWithKey('acc_1', WALLET)
  await log.append([
    ...events,
    ev<NodesSelected>({ type: 'NodesSelected', accountId: 'acc_1', nodes: [{ network: 'eth-1', kind: 'archive' }] }, T0 + 1),
    ev<PlanEnded>({ type: 'PlanEnded', accountId: 'acc_1', planId: 'tier-2', reason: 'cancelled' }, T0 + 2),
    ev<NodesSelected>({ type: 'NodesSelected', accountId: 'acc_nobody', nodes: [] }, T0 + 3),
  ])
  await projector.catchUp()
  t.same(store.account('acc_1')!.nodes, [{ network: 'eth-1', kind: 'archive' }])
  t.equal(store.account('acc_1')!.plan?.planId, 'tier-1', 'ending another plan leaves the current one')
  t.equal(store.account('acc_nobody'), undefined)

  await log.append([ev<PlanEnded>({ type: 'PlanEnded', accountId: 'acc_1', planId: 'tier-1', reason: 'expired' }, T0 + 4)])
  await projector.catchUp()
  t.equal(store.account('acc_1')!.plan, null)
})

t.test('start() follows appends: a revocation reaches onApplied without a catchUp', async (t) => {
  const { log, store, projector, appliedUntil } = await setup(t)
  const { events, key } = accountWithKey('acc_1', WALLET)
  await log.append(events)
  const applied = appliedUntil(() => store.keyByHash(key.keyHash)?.revokedAt === T0)
  projector.start()
  await log.append([ev<KeyRevoked>({ type: 'KeyRevoked', accountId: 'acc_1', keyId: key.keyId, reason: 'revoked', effectiveAt: T0 }, T0)])
  // 10 s is an outer bound, so that a revocation never applied fails the test instead of hanging
  // it; how soon it is applied is not asserted.
  await t.resolves(Promise.race([applied, rejectAfter(10_000, 'revocation not applied within 10 s')]))
  t.equal(store.checkpoint(), 4)
  t.ok(projector.caughtUp())
})

function rejectAfter(ms: number, message: string): Promise<never> {
  return new Promise((_, reject) => setTimeout(() => reject(new Error(message)), ms).unref())
}

t.test('events another projector already applied to the shared store are still reported to onApplied', async (t) => {
  const { log, store, projector } = await setup(t)
  const { events, key } = accountWithKey('acc_1', WALLET)
  await log.append(events)
  await projector.catchUp() // the CLI's projector, on the store the gateway shares
  const reported: ProjectorChanges[] = []
  const gateway = new Projector(store, log, { onApplied: (c) => reported.push(c) })
  await gateway.apply(await log.read(1, 10)) // skipped: at or below the checkpoint
  t.equal(store.checkpoint(), 3)
  t.same(reported, [{ keyHashes: [key.keyHash], accountIds: ['acc_1'], penaltyKeys: [] }], 'its actors still hear about the key')
})
