import { join } from 'node:path'
import t from 'tap'
import type { NotificationsRecorded, WsCooldownStarted, WsPenaltyImposed } from '../../src/events/types.js'
import { replay, stateDigest } from '../../src/projections/replay.js'
import { openLedger } from '../helpers/ledger.js'
import { accountWithKey, ev, T0 } from './fixtures.js'
import { usageTotals } from '../../src/usage/usage-queries.js'

const WALLET = '0x' + '34'.repeat(20)

function cooldown(keyId: string, until: number, instance: string): WsCooldownStarted {
  return ev<WsCooldownStarted>(
    { type: 'WsCooldownStarted', accountId: 'acc_w', keyId, network: 'eth-1', instance, reason: 'ws-connection-rate', until, connections: 16, windowMs: 1000 },
    until - 60_000,
  )
}

function penalty(keyId: string, until: number): WsPenaltyImposed {
  return ev<WsPenaltyImposed>(
    {
      type: 'WsPenaltyImposed',
      accountId: 'acc_w',
      keyId,
      network: 'eth-1',
      instance: 'gw-a',
      reason: 'ws-bad-messages',
      until,
      badMessages: 21,
      windowMs: 60_000,
    },
    until - 300_000,
  )
}

t.test('cooldowns and penalties land in the penalties db; the later end wins, in any order', async (t) => {
  const changed: string[][] = []
  const { log, store, projector, dir } = await openLedger(t, { projector: { onApplied: (c) => changed.push(c.keyHashes) } })
  const a = accountWithKey('acc_w', WALLET)
  const keyId = a.key.keyId
  await log.append(a.events)
  await projector.catchUp()
  t.equal(store.wsBlocks(keyId), undefined, 'no block yet')

  // Two instances decided cooldowns; the later one was appended first.
  await log.append([cooldown(keyId, T0 + 120_000, 'gw-b'), cooldown(keyId, T0 + 60_000, 'gw-a'), penalty(keyId, T0 + 300_000)])
  await projector.catchUp()
  t.same(store.wsBlocks(keyId), { cooldownUntil: T0 + 120_000, penaltyUntil: T0 + 300_000 })
  t.ok(
    changed.some((hashes) => hashes.includes(a.key.keyHash)),
    'the key is reported changed, so that its actor hears of it',
  )

  const notified = ev<NotificationsRecorded>({
    type: 'NotificationsRecorded',
    accountId: 'acc_w',
    keyId,
    network: 'eth-1',
    kind: 'full',
    instance: 'gw-a',
    intervalStart: T0,
    intervalMs: 1000,
    notifications: 7,
    bytesOut: 700,
  })
  await log.append([notified, notified])
  await projector.catchUp()
  t.match(usageTotals(store, { keyId }), { notifications: 7, bytesOut: 700 }, 'notifications are usage, counted once')

  const before = stateDigest(store)
  const rebuilt = await replay(join(dir, 'replayed'), log)
  t.equal(rebuilt.digest, before, 'replay rebuilds the same state')
})
