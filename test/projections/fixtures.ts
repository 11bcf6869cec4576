import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { makeEvent } from '../../src/events/make-event.js'
import type { EventInput, NodeKind, RateLimited, TollgateEvent, UsageRecorded } from '../../src/events/types.js'
import { generateApiKey } from '../../src/keys/api-key.js'

/** Shared by the projection tests (tap runs this file too: it has no tests of its own). */

export const T0 = 1_700_000_000_000

/** A fresh temporary folder, removed at teardown. */
export function tempDir(t: { teardown(fn: () => unknown): void }, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `tollgate-${name}-`))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

export function ev<E extends TollgateEvent>(input: EventInput<E>, time = T0): E {
  return makeEvent<E>(input, time)
}

/** AccountCreated + PlanActivated + KeyIssued for one account; returns the events and the clear key. */
export function accountWithKey(accountId: string, wallet: string, time = T0) {
  const key = generateApiKey()
  const events: TollgateEvent[] = [
    ev({ type: 'AccountCreated', accountId, wallet }, time),
    ev({ type: 'PlanActivated', accountId, planId: 'tier-1', startsAt: time, endsAt: time + 30 * 86_400_000 }, time),
    ev({ type: 'KeyIssued', accountId, keyId: key.keyId, keyHash: key.keyHash, keyCipher: 'cipher-' + key.keyId }, time),
  ]
  return { events, key }
}

export interface UsageInput {
  accountId: string
  keyId: string
  network?: string
  kind?: NodeKind
  instance?: string
  intervalStart: number
  requests: number
  errors?: number
  bytesIn?: number
  bytesOut?: number
  /** Absent: an event as version 1 wrote it (its calls count 26 units each). */
  units?: number
}

/** A UsageRecorded; without `units`, shaped (and versioned) as version 1 wrote it. */
export function usageEvent(u: UsageInput): UsageRecorded {
  const e = ev<UsageRecorded>(
    {
      type: 'UsageRecorded',
      accountId: u.accountId,
      keyId: u.keyId,
      network: u.network ?? 'eth-1',
      kind: u.kind ?? 'full',
      instance: u.instance ?? 'gw-a',
      intervalStart: u.intervalStart,
      intervalMs: 10_000,
      requests: u.requests,
      errors: u.errors ?? 0,
      bytesIn: u.bytesIn ?? 0,
      bytesOut: u.bytesOut ?? 0,
      ...(u.units === undefined ? {} : { units: u.units }),
    },
    u.intervalStart + 10_000,
  )
  return u.units === undefined ? { ...e, version: 1 } : e
}

export function rateLimitedEvent(accountId: string, keyId: string, intervalStart: number, count: number): RateLimited {
  return ev<RateLimited>(
    {
      type: 'RateLimited',
      accountId,
      keyId,
      network: 'eth-1',
      kind: 'full',
      instance: 'gw-a',
      intervalStart,
      intervalMs: 10_000,
      count,
      reason: 'http-rps',
    },
    intervalStart + 10_000,
  )
}
