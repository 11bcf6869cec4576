import { createHash } from 'node:crypto'
import { makeEvent } from '../../src/events/make-event.js'
import type { EventInput, NodeKind, TollgateEvent } from '../../src/events/types.js'
import { prng } from './prng.js'

/** What the replay benchmark writes into its stream. */
export interface HistoryOptions {
  /** Accounts, each with a key (2,000 in the issue's measurement). */
  accounts: number
  /** Gateway instances that each send their own usage events. */
  instances?: number
  /** Seed of the pseudo-random choices: the same seed, the same events. */
  seed?: number
  /**
   * Event time from one interval's start to the next (default 1 s, the interval itself: a history
   * dense in time). Longer steps spread the same events over more hours, as on a gateway whose
   * keys are called all week: each key's usage then falls into many more hours, and the replay
   * writes a row per key and hour (see spreadStepMs).
   */
  stepMs?: number
}

/** Share of keys called in an interval, per instance: 80 usage events per second of event time, 2,000 accounts. */
const CALLED = 0.02
/** UsageRecorded, RateLimited and NotificationsRecorded per key called. */
const EVENTS_PER_CALL = 1 + 0.03 + 0.02

/**
 * The step (HistoryOptions.stepMs) that spreads a history of `events` events over `hours` hours of
 * event time, from the expected events per interval (the account side is a few in a thousand).
 */
export function spreadStepMs(opts: HistoryOptions, events: number, hours: number): number {
  const perInterval = (opts.instances ?? 2) * opts.accounts * CALLED * EVENTS_PER_CALL
  // The accounts' own events (created, plan, key) come first, before any usage.
  const usage = Math.max(1, events - 3 * opts.accounts)
  return Math.max(INTERVAL_MS, Math.round((hours * 3_600_000 * perInterval) / usage))
}

/** Event time of the first event: 2026-01-01T00:00:00Z. */
const T0 = Date.UTC(2026, 0, 1)
/** The gateway's default usage interval (`usage.intervalMs`). */
const INTERVAL_MS = 1000
const NETWORKS: ReadonlyArray<readonly [string, NodeKind]> = [
  ['eth-1', 'full'],
  ['eth-1', 'archive'],
  ['bsc-1', 'full'],
  ['pol-1', 'full'],
]

/**
 * The event stream of a busy gateway, as many events as asked for: every account created with a
 * plan and a key first, then interval after interval (1 s, the default) usage from each instance
 * for the keys called in it (one in fifty), a few rate-limit decisions, notifications,
 * sign-ins, key regenerations and plan changes among them. Mostly UsageRecorded (94.6% of
 * 1,000,000), as on a real stream. Deterministic for a seed, ids included, so two runs write the same stream.
 * @example
 * const events = history({ accounts: 2000 })
 * for (let i = 0; i < 100_000; i++) await publish(events.next().value!)
 */
export function* history(opts: HistoryOptions): Generator<TollgateEvent> {
  const random = prng(opts.seed ?? 1)
  const instances = Array.from({ length: opts.instances ?? 2 }, (_, i) => `gw-${i + 1}`)
  const accounts = Array.from({ length: opts.accounts }, (_, i) => ({
    accountId: `acc_${hex(`account ${i}`, 16)}`,
    wallet: `0x${hex(`wallet ${i}`, 40)}`,
    keyId: keyIdOf(i, 0),
    keys: 1,
    network: NETWORKS[i % NETWORKS.length]!,
  }))
  const ev = (input: EventInput, time: number): TollgateEvent => makeEvent(input, time)

  for (const [i, a] of accounts.entries()) {
    const time = T0 + i
    yield ev({ type: 'AccountCreated', accountId: a.accountId, wallet: a.wallet }, time)
    yield ev({ type: 'PlanActivated', accountId: a.accountId, planId: 'tier-1', startsAt: time, endsAt: time + 30 * 86_400_000 }, time)
    yield ev({ type: 'KeyIssued', accountId: a.accountId, keyId: a.keyId, keyHash: hex(`hash ${a.keyId}`, 64), keyCipher: `cipher-${a.keyId}` }, time)
  }
  const step = opts.stepMs ?? INTERVAL_MS
  for (let start = T0 + 60_000; ; start += step) {
    const end = start + INTERVAL_MS
    for (const instance of instances) {
      for (const a of accounts) {
        if (random() >= CALLED) continue
        const [network, kind] = a.network
        const requests = 1 + Math.floor(random() * 400)
        const usage = { accountId: a.accountId, keyId: a.keyId, network, kind, instance, intervalStart: start, intervalMs: INTERVAL_MS }
        const errors = random() < 0.1 ? Math.floor(random() * 5) : 0
        yield ev({ type: 'UsageRecorded', ...usage, requests, errors, bytesIn: requests * 90, bytesOut: requests * (200 + Math.floor(random() * 3000)) }, end)
        if (random() < 0.03) yield ev({ type: 'RateLimited', ...usage, count: 1 + Math.floor(random() * 50), reason: 'http-rps' }, end)
        if (random() < 0.02) yield ev({ type: 'NotificationsRecorded', ...usage, notifications: 3, bytesOut: 2400 }, end)
      }
    }
    // The account side: rare beside usage, as on a real stream.
    const a = accounts[Math.floor(random() * accounts.length)]!
    const r = random()
    if (r < 0.02) {
      const keyId = keyIdOf(accounts.indexOf(a), a.keys++)
      yield ev({ type: 'KeyIssued', accountId: a.accountId, keyId, keyHash: hex(`hash ${keyId}`, 64), keyCipher: `cipher-${keyId}` }, end)
      yield ev({ type: 'KeyRevoked', accountId: a.accountId, keyId: a.keyId, reason: 'regenerated', effectiveAt: end }, end)
      a.keyId = keyId
    } else if (r < 0.04) {
      yield ev(
        {
          type: 'SignedIn',
          accountId: a.accountId,
          wallet: a.wallet,
          nonce: hex(`nonce ${start}`, 12),
          sessionHash: hex(`session ${start}`, 64),
          expiresAt: end + 86_400_000,
        },
        end,
      )
    } else if (r < 0.05) {
      yield ev({ type: 'PlanActivated', accountId: a.accountId, planId: 'tier-2', startsAt: end, endsAt: end + 30 * 86_400_000 }, end)
    }
  }
}

function keyIdOf(account: number, n: number): string {
  return `key_${hex(`key ${account} ${n}`, 16)}`
}

function hex(of: string, length: number): string {
  return createHash('sha256').update(of).digest('hex').slice(0, length)
}
