/**
 * Writes log-v1.msgpack and digest.json: a log as the code of commit 39d65d9 (before the account
 * deciders and the account token in subjects) wrote it, with every event type, encoded by that
 * code's codec (timestamps as float64) under that code's subjects, and the digest its replay
 * gave. Kept so that every later version proves it replays an old log to the same state.
 * Subjects as that version wrote them: `tollgate.<category>.<Type>`. Run once: `node --import tsx scripts/make-v1-log.ts` (done with the code of that commit: run with a later version it writes that version's log; the
 * output is committed).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pack } from 'msgpackr'
import { EmbeddedLog } from '../src/events/embedded-log.js'
import { encodeEvent } from '../src/events/codec.js'
import { makeEvent } from '../src/events/make-event.js'
import { categoryOf, type EventInput, type TollgateEvent } from '../src/events/types.js'
import { replay } from '../src/projections/replay.js'
import { StateStore } from '../src/store/state-store.js'
import { readModelDigest } from '../test/projections/fixtures-v1/read-model-digest.js'

const T0 = 1_790_000_000_000
const DAY = 86_400_000
const events: TollgateEvent[] = []
const add = (input: EventInput, time: number): void => void events.push(makeEvent(input, time))

for (let n = 0; n < 4; n++) {
  const accountId = `acc_${n}${'0'.repeat(23)}`
  const wallet = `0x${String(n).repeat(40)}`
  const t = T0 + n * 60_000
  add({ type: 'AccountCreated', accountId, wallet }, t)
  add({ type: 'SignedIn', accountId, wallet, nonce: `nonce${n}`, sessionHash: `s${n}`.padEnd(64, '0'), expiresAt: t + DAY }, t)
  if (n === 0) {
    add({ type: 'FreePlanClaimed', accountId, planId: 'free-trial', attempt: 'a0' }, t + 1)
    add({ type: 'PlanActivated', accountId, planId: 'free-trial', startsAt: t + 1, endsAt: t + 1 + DAY }, t + 1)
    add({ type: 'NodesSelected', accountId, nodes: [] }, t + 1)
  } else {
    const invoiceId = `inv_${n}`
    add(
      {
        type: 'InvoiceCreated',
        accountId,
        invoiceId,
        planId: n === 3 ? 'tier-3' : 'tier-1',
        nodes: n === 3 ? [] : [{ network: 'eth-1', kind: 'full' }],
        network: 'eth-1',
        token: `0x${'a'.repeat(40)}`,
        treasury: `0x${'b'.repeat(40)}`,
        amount: '50000000',
        decimals: 6,
        priceUsd: 50,
      },
      t + 1,
    )
    add(
      {
        type: 'PaymentConfirmed',
        accountId,
        invoiceId,
        network: 'eth-1',
        txHash: `0x${String(n).repeat(64)}`,
        logIndex: 0,
        from: wallet,
        amount: '50000000',
        blockNumber: 100 + n,
        blockHash: `0x${'c'.repeat(64)}`,
        attempt: `p${n}`,
      },
      t + 2,
    )
    add({ type: 'PlanActivated', accountId, planId: n === 3 ? 'tier-3' : 'tier-1', startsAt: t + 2, endsAt: t + 2 + 30 * DAY }, t + 3)
    add({ type: 'NodesSelected', accountId, nodes: n === 3 ? [] : [{ network: 'eth-1', kind: 'full' }] }, t + 3)
  }
  add({ type: 'KeyIssued', accountId, keyId: `key_${n}a`, keyHash: `${n}a`.padEnd(64, 'f'), keyCipher: `cipher-${n}a` }, t + 4)
  if (n === 1) {
    add({ type: 'KeyIssued', accountId, keyId: `key_${n}b`, keyHash: `${n}b`.padEnd(64, 'f'), keyCipher: `cipher-${n}b` }, t + 5)
    add({ type: 'KeyRevoked', accountId, keyId: `key_${n}a`, reason: 'regenerated', effectiveAt: t + 5 + 60_000 }, t + 5)
    add({ type: 'DomainsRestricted', accountId, keyId: `key_${n}b`, domains: ['app.example.com', '*.example.org'] }, t + 6)
    add({ type: 'SignedOut', accountId, sessionHash: `s${n}`.padEnd(64, '0') }, t + 7)
  }
  if (n === 2) {
    add({ type: 'PrivateNodeRequested', accountId, nodes: [{ network: 'eth-1', kind: 'archive' }] }, t + 8)
    add({ type: 'DedicatedNodeAttached', accountId, network: 'eth-1', kind: 'archive', url: 'http://10.0.0.9:8545', ws: null }, t + 9)
  }
  if (n === 0) add({ type: 'PlanEnded', accountId, planId: 'free-trial', reason: 'expired' }, t + 1 + DAY)
  const keyId = n === 1 ? `key_${n}b` : `key_${n}a`
  for (let i = 0; i < 12; i++) {
    const head = { accountId, keyId, network: 'eth-1', kind: 'full' as const, instance: i % 2 ? 'gw-a' : 'gw-b', intervalStart: t + i * 1000, intervalMs: 1000 }
    add({ type: 'UsageRecorded', ...head, requests: 10 + i + n, errors: i % 3, bytesIn: 700 * i, bytesOut: 900 * i + 1 }, head.intervalStart + 1000)
    if (i % 4 === 0) add({ type: 'RateLimited', ...head, count: i + 1, reason: 'http-rps' }, head.intervalStart + 1000)
    if (i % 5 === 0) add({ type: 'NotificationsRecorded', ...head, notifications: 3 * i, bytesOut: 400 * i }, head.intervalStart + 1000)
  }
  const ws = { accountId, keyId, network: 'eth-1', instance: 'gw-a' }
  add({ type: 'WsLimited', ...ws, intervalStart: t, intervalMs: 1000, reason: 'ws-connections', count: 2 }, t + 1000)
  add({ type: 'WsCooldownStarted', ...ws, reason: 'ws-connection-rate', until: t + 60_000, connections: 16, windowMs: 1000 }, t)
  add({ type: 'WsPenaltyImposed', ...ws, reason: 'ws-bad-messages', until: t + 300_000, badMessages: 20, windowMs: 10_000 }, t)
}
add({ type: 'IpThrottled', ip: '203.0.113.7', until: T0 + 3_600_000, reason: 'rate-limit-rejections', rejections: 100, windowMs: 10_000, instance: 'gw-a' }, T0)

const dir = mkdtempSync(join(tmpdir(), 'tollgate-fixture-'))
try {
  const log = EmbeddedLog.open(join(dir, 'log'))
  await log.append(events)
  const store = StateStore.open(join(dir, 'state'))
  const { digest } = await replay(store, log)
  const readModel = readModelDigest(store)
  await store.close()
  await log.close()
  const here = new URL('../test/projections/fixtures-v1/', import.meta.url)
  writeFileSync(new URL('log-v1.msgpack', here), pack(events.map((e) => [`tollgate.${categoryOf(e.type)}.${e.type}`, Buffer.from(encodeEvent(e))])))
  writeFileSync(new URL('digest.json', here), JSON.stringify({ events: events.length, allTables: digest, readModel }, null, 2) + '\n')
  console.log(`wrote ${events.length} events; digest ${digest}; read model ${readModel}`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
