import { makeEvent } from '../../src/events/make-event.js'
import { EVENT_TYPES, type EventInput, type EventType, type TollgateEvent } from '../../src/events/types.js'

/** One event of every type, shared by the codec tests (tap runs only *.test.ts files). */

export const T0 = 1_700_000_000_000

/** One sample of every type: the mapped type makes a new event type without a sample a compile error. */
export const inputs: { [K in EventType]: EventInput<Extract<TollgateEvent, { type: K }>> } = {
  AccountCreated: { type: 'AccountCreated', accountId: 'acc-1', wallet: '0x' + 'ab'.repeat(20) },
  PlanActivated: { type: 'PlanActivated', accountId: 'acc-1', planId: 'tier-1', startsAt: T0, endsAt: null },
  PlanEnded: { type: 'PlanEnded', accountId: 'acc-1', planId: 'tier-1', reason: 'replaced', startsAt: 1_700_000_000_000 },
  NodesSelected: { type: 'NodesSelected', accountId: 'acc-1', nodes: [{ network: 'eth-1', kind: 'archive' }, { network: 'bsc-1', kind: 'full' }] },
  KeyIssued: { type: 'KeyIssued', accountId: 'acc-1', keyId: 'k1', keyHash: 'f'.repeat(64), keyCipher: 'AbC-_9' },
  KeyRevoked: { type: 'KeyRevoked', accountId: 'acc-1', keyId: 'k1', reason: 'regenerated', effectiveAt: T0 + 5000 },
  RateLimited: {
    type: 'RateLimited', accountId: 'acc-1', keyId: 'k1', network: 'eth-1', kind: 'full', instance: 'gw-1',
    intervalStart: T0, intervalMs: 10_000, count: 7, reason: 'http-rps',
  },
  IpThrottled: {
    type: 'IpThrottled', ip: '203.0.113.7', until: T0 + 60_000, reason: 'rate-limit-rejections', rejections: 1000, windowMs: 10_000, instance: 'gw-1',
  },
  UsageRecorded: {
    type: 'UsageRecorded', accountId: 'acc-1', keyId: 'k1', network: 'eth-1', kind: 'archive', instance: 'gw-1',
    intervalStart: T0, intervalMs: 10_000, requests: 12, errors: 1, bytesIn: 300, bytesOut: 4_000_000_000,
  },
  WsLimited: {
    type: 'WsLimited', accountId: 'acc-1', keyId: 'k1', network: 'eth-1', instance: 'gw-1',
    intervalStart: T0, intervalMs: 1000, reason: 'ws-messages-throttled', count: 40,
  },
  WsCooldownStarted: {
    type: 'WsCooldownStarted', accountId: 'acc-1', keyId: 'k1', network: 'eth-1', instance: 'gw-1',
    reason: 'ws-connection-rate', until: T0 + 60_000, connections: 16, windowMs: 1000,
  },
  WsPenaltyImposed: {
    type: 'WsPenaltyImposed', accountId: 'acc-1', keyId: 'k1', network: 'eth-1', instance: 'gw-1',
    reason: 'ws-bad-messages', until: T0 + 300_000, badMessages: 21, windowMs: 60_000,
  },
  NotificationsRecorded: {
    type: 'NotificationsRecorded', accountId: 'acc-1', keyId: 'k1', network: 'eth-1', kind: 'full', instance: 'gw-1',
    intervalStart: T0, intervalMs: 1000, notifications: 3, bytesOut: 2400,
  },
  SignedIn: { type: 'SignedIn', accountId: 'acc-1', wallet: '0x' + 'ab'.repeat(20), nonce: 'a1b2c3d4e5f6', sessionHash: 'e'.repeat(64), expiresAt: T0 + 86_400_000 },
  SignedOut: { type: 'SignedOut', accountId: 'acc-1', sessionHash: 'e'.repeat(64) },
  FreePlanClaimed: { type: 'FreePlanClaimed', accountId: 'acc-1', planId: 'free-trial', attempt: 'r4nd0m' },
  InvoiceCreated: {
    type: 'InvoiceCreated', accountId: 'acc-1', invoiceId: 'inv_1', planId: 'tier-1', nodes: [{ network: 'eth-1', kind: 'full' }],
    network: 'eth-1', token: '0x' + 'cd'.repeat(20), treasury: '0x' + 'ef'.repeat(20), amount: '50000000000000000000', decimals: 18, priceUsd: 50,
    expiresAt: T0 + 1_800_000,
  },
  PaymentConfirmed: {
    type: 'PaymentConfirmed', accountId: 'acc-1', invoiceId: 'inv_1', network: 'eth-1', txHash: '0x' + '12'.repeat(32), logIndex: 0,
    from: '0x' + 'ab'.repeat(20), amount: '50000000000000000000', blockNumber: 12, blockHash: '0x' + '34'.repeat(32), minedAt: T0, attempt: 'r4nd0m',
  },
  PaymentUnmatched: {
    type: 'PaymentUnmatched', accountId: 'acc-1', invoiceId: 'inv_1', reason: 'invoice-expired', invoiceExpiresAt: T0 + 1_800_000, network: 'eth-1',
    txHash: '0x' + '12'.repeat(32), logIndex: 0, from: '0x' + 'ab'.repeat(20), amount: '50000000000000000000', blockNumber: 12, blockHash: '0x' + '34'.repeat(32),
    minedAt: T0 + 1_800_001,
  },
  PrivateNodeRequested: { type: 'PrivateNodeRequested', accountId: 'acc-1', nodes: [{ network: 'eth-1', kind: 'archive' }] },
  DomainsRestricted: { type: 'DomainsRestricted', accountId: 'acc-1', keyId: 'k1', domains: ['example.com', '*.example.org'] },
  DedicatedNodeAttached: { type: 'DedicatedNodeAttached', accountId: 'acc-1', network: 'eth-1', kind: 'full', url: 'http://10.0.0.5:8545', ws: null },
}
export const samples = EVENT_TYPES.map((type) => makeEvent(inputs[type] as EventInput, T0 + 1))
