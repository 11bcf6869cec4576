import { EVENT_VERSIONS, type EventType } from '../src/events/types.js'

/**
 * JSON Schemas (draft 2020-12) of every event type, the contract for consumers in any language
 * that decode our msgpack events from NATS. They must agree with src/events/types.ts exactly:
 * test/events/codec.test.ts validates a sample of every type against its schema.
 * `schemas/generate.ts` writes them to `schemas/events/<Type>.schema.json`.
 */

const DRAFT = 'https://json-schema.org/draft/2020-12/schema'

const nonNegativeInteger = { type: 'integer', minimum: 0 } as const
const msSinceEpoch = { type: 'integer', minimum: 0, description: 'Milliseconds since the epoch.' } as const
const nonEmpty = { type: 'string', minLength: 1 } as const
const nodeKind = { enum: ['full', 'archive'] } as const
const address = { type: 'string', pattern: '^0x[0-9a-f]{40}$', description: 'Lower-case 0x address.' } as const
const sha256Hex = { type: 'string', pattern: '^[0-9a-f]{64}$' } as const
const uintString = { type: 'string', pattern: '^[0-9]+$', description: 'An integer in the token\'s smallest unit, as a decimal string.' } as const
const entitlements = {
  type: 'array',
  items: {
    type: 'object',
    properties: { network: { type: 'string', minLength: 1 }, kind: nodeKind },
    required: ['network', 'kind'],
    additionalProperties: false,
  },
} as const

/** A property bag and which of its names are required (all of them, in this catalog). */
type Payload = Record<string, object>

function eventSchema(type: EventType, description: string, payload: Payload): object {
  const properties: Payload = {
    type: { const: type },
    version: { const: EVENT_VERSIONS[type], description: 'Schema version of this event type.' },
    id: {
      type: 'string',
      pattern: `^${type}-[0-9a-f]{24}$`,
      description: 'Deterministic id derived from the fact (JetStream msgID).',
    },
    time: { ...msSinceEpoch, description: 'When the fact happened, ms since the epoch.' },
    ...payload,
  }
  return {
    $schema: DRAFT,
    $id: `urn:tollgate:event:${type}`,
    title: type,
    description,
    type: 'object',
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  }
}

/** An ERC-20 transfer as checked on chain (TokenTransfer in src/events/types.ts). */
const tokenTransfer = {
  network: nonEmpty,
  txHash: { type: 'string', pattern: '^0x[0-9a-f]{64}$' },
  logIndex: nonNegativeInteger,
  from: address,
  amount: uintString,
  blockNumber: nonNegativeInteger,
  blockHash: { type: 'string', pattern: '^0x[0-9a-f]{64}$' },
} as const

const keyScope = {
  accountId: nonEmpty,
  keyId: nonEmpty,
  network: nonEmpty,
  kind: nodeKind,
  instance: { ...nonEmpty, description: 'The gateway process that made these decisions or served these calls.' },
  intervalStart: msSinceEpoch,
  intervalMs: { type: 'integer', minimum: 1 },
} as const

export const eventSchemas: Record<EventType, object> = {
  AccountCreated: eventSchema('AccountCreated', 'An account was created for a wallet.', {
    accountId: nonEmpty,
    wallet: { type: 'string', pattern: '^0x[0-9a-f]{40}$', description: 'Lower-case 0x address.' },
  }),
  PlanActivated: eventSchema('PlanActivated', 'A plan period started for an account.', {
    accountId: nonEmpty,
    planId: nonEmpty,
    startsAt: msSinceEpoch,
    endsAt: { type: ['integer', 'null'], minimum: 0, description: 'null: the plan has no end.' },
  }),
  PlanEnded: eventSchema('PlanEnded', 'A plan period ended.', {
    accountId: nonEmpty,
    planId: nonEmpty,
    reason: { enum: ['expired', 'cancelled', 'replaced'] },
    startsAt: {
      type: 'integer',
      minimum: 0,
      description: 'Start of the period that ended (PlanActivated.startsAt): a later period of the same plan is not ended. Version 2; absent in version 1.',
    },
  }),
  NodesSelected: eventSchema('NodesSelected', 'The (network, node kind) pairs an account may use.', {
    accountId: nonEmpty,
    nodes: {
      type: 'array',
      items: {
        type: 'object',
        properties: { network: nonEmpty, kind: nodeKind },
        required: ['network', 'kind'],
        additionalProperties: false,
      },
    },
  }),
  KeyIssued: eventSchema('KeyIssued', 'An API key was issued; the key itself never appears in clear.', {
    accountId: nonEmpty,
    keyId: nonEmpty,
    keyHash: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'hex SHA-256 of the key string.' },
    keyCipher: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]+$',
      description: 'base64url AES-256-GCM of the key under TOLLGATE_SECRET (iv|tag|ciphertext).',
    },
  }),
  KeyRevoked: eventSchema('KeyRevoked', 'An API key stops working from effectiveAt.', {
    accountId: nonEmpty,
    keyId: nonEmpty,
    reason: { enum: ['regenerated', 'revoked'] },
    effectiveAt: msSinceEpoch,
  }),
  RateLimited: eventSchema('RateLimited', 'Rejections aggregated per key, network, node kind and interval.', {
    ...keyScope,
    count: nonNegativeInteger,
    reason: { enum: ['http-rps'] },
  }),
  IpThrottled: eventSchema('IpThrottled', 'A client IP that kept exceeding rate limits is throttled until `until`, for every key.', {
    ip: { type: 'string', minLength: 1 },
    until: nonNegativeInteger,
    reason: { enum: ['rate-limit-rejections'] },
    rejections: nonNegativeInteger,
    windowMs: nonNegativeInteger,
    instance: { type: 'string', minLength: 1 },
  }),
  UsageRecorded: eventSchema('UsageRecorded', 'Usage aggregated per key, network, node kind and interval.', {
    ...keyScope,
    requests: nonNegativeInteger,
    errors: nonNegativeInteger,
    bytesIn: nonNegativeInteger,
    bytesOut: nonNegativeInteger,
  }),
  WsLimited: eventSchema('WsLimited', 'WebSocket refusals aggregated per key, network, reason and interval.', {
    accountId: nonEmpty,
    keyId: nonEmpty,
    network: nonEmpty,
    instance: keyScope.instance,
    intervalStart: msSinceEpoch,
    intervalMs: keyScope.intervalMs,
    reason: {
      enum: ['ws-connections', 'ws-cooldown', 'ws-messages-throttled', 'ws-messages-dropped', 'ws-penalty'],
      description: 'ws-connections: too many open; ws-cooldown: new connections blocked; ws-messages-throttled: answered -32005; ws-messages-dropped: not answered; ws-penalty: refused during a penalty.',
    },
    count: { ...nonNegativeInteger, description: 'Connections or calls refused (each call of a batch counts).' },
  }),
  WsCooldownStarted: eventSchema('WsCooldownStarted', 'Too many new WebSocket connections in one second: new connections of the key are blocked until `until`.', {
    accountId: nonEmpty,
    keyId: nonEmpty,
    network: nonEmpty,
    instance: keyScope.instance,
    reason: { const: 'ws-connection-rate' },
    until: msSinceEpoch,
    connections: nonNegativeInteger,
    windowMs: { type: 'integer', minimum: 1 },
  }),
  WsPenaltyImposed: eventSchema('WsPenaltyImposed', 'Repeated malformed or unsupported WebSocket messages: messages of the key are refused until `until`.', {
    accountId: nonEmpty,
    keyId: nonEmpty,
    network: nonEmpty,
    instance: keyScope.instance,
    reason: { const: 'ws-bad-messages' },
    until: msSinceEpoch,
    badMessages: nonNegativeInteger,
    windowMs: { type: 'integer', minimum: 1 },
  }),
  NotificationsRecorded: eventSchema('NotificationsRecorded', 'Subscription notifications sent to a key, per network, node kind and interval.', {
    ...keyScope,
    notifications: nonNegativeInteger,
    bytesOut: nonNegativeInteger,
  }),
  SignedIn: eventSchema('SignedIn', 'A wallet signed in with SIWE (EIP-4361); the first SignedIn of a nonce wins.', {
    accountId: nonEmpty,
    wallet: address,
    nonce: { type: 'string', pattern: '^[A-Za-z0-9]{8,}$' },
    sessionHash: { ...sha256Hex, description: 'hex SHA-256 of the session token.' },
    expiresAt: msSinceEpoch,
  }),
  SignedOut: eventSchema('SignedOut', 'A dashboard session ended before its expiry.', {
    accountId: nonEmpty,
    sessionHash: sha256Hex,
  }),
  FreePlanClaimed: eventSchema('FreePlanClaimed', 'A free plan was taken, once per account (wallet); the first claim wins.', {
    accountId: nonEmpty,
    planId: nonEmpty,
    attempt: nonEmpty,
  }),
  InvoiceCreated: eventSchema('InvoiceCreated', 'A paid plan was chosen: the amount due in an ERC-20 token.', {
    accountId: nonEmpty,
    invoiceId: nonEmpty,
    planId: nonEmpty,
    nodes: entitlements,
    network: nonEmpty,
    token: address,
    treasury: address,
    amount: uintString,
    decimals: { type: 'integer', minimum: 0, maximum: 255 },
    priceUsd: { type: 'number', minimum: 0 },
    expiresAt: {
      ...msSinceEpoch,
      description: 'Until when the terms hold: a transfer mined in a later block does not pay the invoice (PaymentUnmatched). Version 2; absent in version 1 (no expiry).',
    },
  }),
  PaymentConfirmed: eventSchema('PaymentConfirmed', 'An ERC-20 transfer paid an invoice; one transfer (tx hash, log index) pays one invoice.', {
    accountId: nonEmpty,
    invoiceId: nonEmpty,
    ...tokenTransfer,
    minedAt: { ...msSinceEpoch, description: "Timestamp of the transfer's block, ms since the epoch. Version 2; absent in version 1." },
    attempt: nonEmpty,
  }),
  PaymentUnmatched: eventSchema(
    'PaymentUnmatched',
    'A transfer offered for an invoice was mined after the invoice expired: recorded (not lost), it did not pay that invoice and may pay a fresh one.',
    {
      accountId: nonEmpty,
      invoiceId: nonEmpty,
      reason: { enum: ['invoice-expired'] },
      invoiceExpiresAt: msSinceEpoch,
      ...tokenTransfer,
      minedAt: { ...msSinceEpoch, description: "Timestamp of the transfer's block, ms since the epoch (later than invoiceExpiresAt)." },
    },
  ),
  PrivateNodeRequested: eventSchema('PrivateNodeRequested', 'The owner asked for a Private Node.', {
    accountId: nonEmpty,
    nodes: entitlements,
  }),
  DomainsRestricted: eventSchema('DomainsRestricted', 'The browser domains a key may be used from (empty: any).', {
    accountId: nonEmpty,
    keyId: nonEmpty,
    domains: { type: 'array', items: nonEmpty },
  }),
  DedicatedNodeAttached: eventSchema('DedicatedNodeAttached', 'The operator attached a dedicated node to an account.', {
    accountId: nonEmpty,
    network: nonEmpty,
    kind: nodeKind,
    url: nonEmpty,
    ws: { type: ['string', 'null'], minLength: 1 },
  }),
}
