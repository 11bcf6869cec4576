import { createHash } from 'node:crypto'
import { EVENT_VERSIONS, type EventInput, type TollgateEvent } from './types.js'

/**
 * Build a complete event from what the caller knows: fills `version` (current schema version of
 * the type), `time` and a deterministic `id`.
 *
 * The id is derived from the fact itself, never random: re-making the same fact after a crash
 * or a retry yields the same id, so JetStream's `msgID` dedup and the embedded log's id index
 * store it once. Format `<Type>-<first 24 hex of sha256>`.
 * @example
 * const e = makeEvent({ type: 'AccountCreated', accountId, wallet }, clock.now()) // e: AccountCreated
 * const k = makeEvent<KeyIssued>({ type: 'KeyIssued', accountId, keyId, keyHash, keyCipher }, now)
 */
export function makeEvent<I extends EventInput>(input: I, time: number): Extract<TollgateEvent, { type: I['type'] }>
export function makeEvent<E extends TollgateEvent = TollgateEvent>(input: EventInput<E>, time: number): E
export function makeEvent(input: EventInput, time: number): TollgateEvent {
  // Head first for readable dumps; set again after the spread so that a stray head field in
  // the input can never override what this function decides.
  const { type, ...payload } = input
  const event: Record<string, unknown> = { type, version: 0, id: '', time, ...payload }
  event.version = EVENT_VERSIONS[type]
  event.time = time
  event.id = eventId(event as UnidentifiedEvent)
  return event as unknown as TollgateEvent
}

/** An event before its id is known (distributed over the union so that `type` still narrows). */
export type UnidentifiedEvent = TollgateEvent extends infer E ? (E extends TollgateEvent ? Omit<E, 'id'> : never) : never

/** The deterministic id of an event: which fields identify a fact depends on its type. */
function eventId(event: UnidentifiedEvent): string {
  const digest = createHash('sha256')
    .update(JSON.stringify(identityOf(event)))
    .digest('hex')
  return `${event.type}-${digest.slice(0, 24)}`
}

/** The fields that make two events the same fact (anything else may differ between retries). */
function identityOf(e: UnidentifiedEvent): unknown[] {
  switch (e.type) {
    case 'AccountCreated':
      return [e.type, e.accountId]
    case 'PlanActivated':
      return [e.type, e.accountId, e.planId, e.startsAt]
    case 'PlanEnded':
      return [e.type, e.accountId, e.planId, e.time]
    case 'NodesSelected':
      // Sorted: the same selection listed in another order is the same fact.
      return [e.type, e.accountId, e.time, e.nodes.map((n) => `${n.network}:${n.kind}`).sort()]
    case 'KeyIssued':
      return [e.type, e.keyId]
    case 'KeyRevoked':
      // The command, not only the key: a revocation at once after one with a grace period is
      // another fact (with only the key in it, the second was dropped as a duplicate).
      return [e.type, e.keyId, e.effectiveAt]
    case 'IpThrottled':
      return [e.type, e.instance, e.ip, e.until]
    case 'RateLimited':
    case 'UsageRecorded':
    case 'NotificationsRecorded':
      return [e.type, e.instance, e.keyId, e.network, e.kind, e.intervalStart]
    case 'WsLimited':
      return [e.type, e.instance, e.keyId, e.network, e.reason, e.intervalStart]
    case 'WsCooldownStarted':
    case 'WsPenaltyImposed':
      return [e.type, e.instance, e.keyId, e.time]
    case 'SignedIn':
      // One nonce, one sign-in: a replay is the same fact and is stored once.
      return [e.type, e.nonce]
    case 'SignedOut':
      return [e.type, e.sessionHash]
    case 'FreePlanClaimed':
      // Once per account (one wallet): two claims at once are one fact.
      return [e.type, e.accountId, e.planId]
    case 'InvoiceCreated':
      return [e.type, e.invoiceId]
    case 'PaymentConfirmed':
      // Not the invoice: one transfer offered for two invoices must be ONE fact.
      return [e.type, e.network, e.txHash.toLowerCase(), e.logIndex]
    case 'PaymentUnmatched':
      // Per invoice: the same late transfer offered again for the same invoice is recorded once.
      return [e.type, e.invoiceId, e.network, e.txHash.toLowerCase(), e.logIndex]
    case 'PrivateNodeRequested':
      return [e.type, e.accountId, e.time]
    case 'DomainsRestricted':
      return [e.type, e.keyId, e.time, [...e.domains].sort()]
    case 'DedicatedNodeAttached':
      return [e.type, e.accountId, e.network, e.kind, e.url]
    case 'KeyRestricted':
      // Sorted: the same lists in another order are the same fact.
      return [e.type, e.keyId, e.time, ...[e.methods, e.deniedMethods, e.contracts, e.ips, e.userAgents].map((l) => [...l].sort())]
    case 'JwtKeyRegistered':
      return [e.type, e.accountId, e.kid, e.time, e.alg, e.publicKey]
    case 'JwtKeyRemoved':
      return [e.type, e.accountId, e.kid, e.time]
    case 'KeyTokenRequired':
      return [e.type, e.keyId, e.time, e.required]
    case 'KeyRuleRefused':
      return [e.type, e.instance, e.keyId, e.network, e.rule, e.intervalStart]
  }
}
