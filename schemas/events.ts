import { Type, type IntegerOptions, type StringOptions, type TProperties } from '@sinclair/typebox'
import { Nullable, Strict, StringEnum } from './json-schema.js'
import { NodeKind } from './node-kind.js'

/**
 * The event catalog, declared once: every event type's JSON Schema (draft 2020-12) with its
 * current version, the contract for consumers in any language that decode our msgpack events
 * from NATS. src/events/types.ts derives the TypeScript types from it; `schemas/generate.ts`
 * writes each to `schemas/events/<Type>.schema.json`.
 *
 * Every field is required in the current version of a type. A field declared `Type.Optional` here
 * is one that older versions of the type lack: the TypeScript type, which describes events as
 * they are read back from a log of any age, has it optional; the published schema requires it.
 */

const DRAFT = 'https://json-schema.org/draft/2020-12/schema'

const NonNegativeInteger = (options: IntegerOptions = {}) => Type.Integer({ minimum: 0, ...options })
const MsSinceEpoch = (description = 'Milliseconds since the epoch.') => Type.Integer({ minimum: 0, description })
const NonEmpty = (options: StringOptions = {}) => Type.String({ minLength: 1, ...options })
const Address = (description = 'Lower-case 0x address.') => Type.String({ pattern: '^0x[0-9a-f]{40}$', description })
const Sha256Hex = (options: StringOptions = {}) => Type.String({ pattern: '^[0-9a-f]{64}$', ...options })
const TxHash = () => Type.String({ pattern: '^0x[0-9a-f]{64}$' })
const UintString = (description = "An integer in the token's smallest unit, as a decimal string.") => Type.String({ pattern: '^[0-9]+$', description })

/** A (network, node kind) pair an account may use. */
export const entitlementSchema = Strict({ network: NonEmpty(), kind: NodeKind() })

/** An event of `type`: the head every event has (`type`, `version`, `id`, `time`), then its payload. */
function Event<T extends string, P extends TProperties>(type: T, version: number, description: string, payload: P) {
  const schema = Strict(
    {
      type: Type.Literal(type),
      version: Type.Integer({ const: version, description: 'Schema version of this event type; bumped on an incompatible change.' }),
      id: Type.String({ pattern: `^${type}-[0-9a-f]{24}$`, description: 'Deterministic id derived from the fact (JetStream msgID).' }),
      time: MsSinceEpoch('When the fact happened, ms since the epoch.'),
      ...payload,
    },
    { $schema: DRAFT, $id: `urn:tollgate:event:${type}`, title: type, description },
  )
  schema.required = Object.keys(schema.properties) // see the head of this file
  return schema
}

/** An ERC-20 transfer as checked on chain (one Transfer log of one transaction). */
export const tokenTransferSchema = Strict({
  network: NonEmpty(),
  txHash: TxHash(),
  logIndex: NonNegativeInteger(),
  from: Address("Lower-case 0x address the tokens came from (the account's wallet)."),
  amount: UintString("Amount transferred, in the token's smallest unit, as a decimal string."),
  blockNumber: NonNegativeInteger(),
  blockHash: TxHash(),
})

/** Who and what a decision or usage event is about, and over which interval. */
const keyScope = {
  accountId: NonEmpty(),
  keyId: NonEmpty(),
  network: NonEmpty(),
  kind: NodeKind(),
  instance: NonEmpty({ description: 'The gateway process that made these decisions or served these calls.' }),
  intervalStart: MsSinceEpoch(),
  intervalMs: Type.Integer({ minimum: 1 }),
}

export const eventSchemas = {
  AccountCreated: Event('AccountCreated', 1, 'An account was created for a wallet.', {
    accountId: NonEmpty(),
    wallet: Address('Lower-case 0x address of the wallet that owns the account.'),
  }),
  PlanActivated: Event('PlanActivated', 1, 'A plan period started for an account.', {
    accountId: NonEmpty(),
    planId: NonEmpty(),
    startsAt: MsSinceEpoch('When the plan period starts, ms since the epoch.'),
    endsAt: Nullable(Type.Integer({ minimum: 0, description: 'When the plan period ends, ms since the epoch; null: the plan has no end.' })),
  }),
  PlanEnded: Event('PlanEnded', 2, 'A plan period ended.', {
    accountId: NonEmpty(),
    planId: NonEmpty(),
    reason: StringEnum(['expired', 'cancelled', 'replaced']),
    startsAt: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'Start of the period that ended (PlanActivated.startsAt): a later period of the same plan is not ended. Version 2; absent in ' +
          'version 1 (such an event ends the plan it names).',
      }),
    ),
  }),
  NodesSelected: Event('NodesSelected', 1, 'The (network, node kind) pairs an account may use.', {
    accountId: NonEmpty(),
    nodes: Type.Array(entitlementSchema),
  }),
  KeyIssued: Event('KeyIssued', 1, 'An API key was issued; the key itself never appears in clear.', {
    accountId: NonEmpty(),
    keyId: NonEmpty(),
    keyHash: Sha256Hex({ description: 'hex SHA-256 of the key string.' }),
    keyCipher: Type.String({
      pattern: '^[A-Za-z0-9_-]+$',
      description: 'base64url AES-256-GCM of the key under TOLLGATE_SECRET (iv|tag|ciphertext).',
    }),
  }),
  KeyRevoked: Event('KeyRevoked', 1, 'An API key stops working from effectiveAt.', {
    accountId: NonEmpty(),
    keyId: NonEmpty(),
    reason: StringEnum(['regenerated', 'revoked']),
    effectiveAt: MsSinceEpoch('From when the key no longer works, ms since the epoch; a grace period puts it in the future.'),
  }),
  RateLimited: Event('RateLimited', 1, 'Rejections aggregated per key, network, node kind and interval (never one event per call).', {
    ...keyScope,
    count: NonNegativeInteger(),
    reason: StringEnum(['http-rps']),
  }),
  IpThrottled: Event(
    'IpThrottled',
    1,
    'A client IP that kept exceeding rate limits is throttled until `until`, for every key; the throttle lifts by itself then. ' +
      'Projected, so that a restarted gateway, or another instance on the same log, enforces it too.',
    {
      ip: NonEmpty(),
      until: NonNegativeInteger({ description: 'When the throttle lifts, ms since the epoch.' }),
      reason: StringEnum(['rate-limit-rejections']),
      rejections: NonNegativeInteger({ description: 'Rejected calls counted over windowMs that crossed the threshold.' }),
      windowMs: NonNegativeInteger(),
      instance: NonEmpty(),
    },
  ),
  KeyRuleRefused: Event(
    'KeyRuleRefused',
    1,
    "Calls refused by a key's own restrictions, aggregated per key, network, rule and interval (never one event per call).",
    {
      accountId: NonEmpty(),
      keyId: NonEmpty(),
      network: NonEmpty(),
      instance: NonEmpty({ description: 'The gateway process that refused these calls.' }),
      intervalStart: MsSinceEpoch(),
      intervalMs: Type.Integer({ minimum: 1 }),
      rule: StringEnum(['method', 'contract', 'ip', 'user-agent']),
      count: NonNegativeInteger({ description: 'Calls refused (each call of a batch counts; a refused request or WebSocket upgrade is one).' }),
    },
  ),
  UsageRecorded: Event('UsageRecorded', 2, 'Usage aggregated per key, network, node kind and interval, by the instance that served it.', {
    ...keyScope,
    requests: NonNegativeInteger({ description: 'Calls served (each call of a batch counts).' }),
    errors: NonNegativeInteger({ description: "Of those, calls answered with a JSON-RPC error (the node's or ours)." }),
    bytesIn: NonNegativeInteger(),
    bytesOut: NonNegativeInteger(),
    units: Type.Optional(
      NonNegativeInteger({
        description:
          "Compute units of those calls: each call its method's cost (docs/costs.md, as configured when it was served). Version 2; " +
          'absent in version 1, whose calls count 26 units each (the cost of an eth_call: they name no method).',
      }),
    ),
  }),
  WsLimited: Event('WsLimited', 1, 'WebSocket refusals aggregated per key, network, reason and interval (never one event per message).', {
    accountId: NonEmpty(),
    keyId: NonEmpty(),
    network: NonEmpty(),
    instance: keyScope.instance,
    intervalStart: MsSinceEpoch(),
    intervalMs: keyScope.intervalMs,
    reason: StringEnum(['ws-connections', 'ws-cooldown', 'ws-messages-throttled', 'ws-messages-dropped', 'ws-penalty'], {
      description:
        'ws-connections: too many open; ws-cooldown: new connections blocked; ws-messages-throttled: answered -32005; ' +
        'ws-messages-dropped: not answered; ws-penalty: refused during a penalty.',
    }),
    count: NonNegativeInteger({
      description: 'Connections or calls refused (each call of a batch counts; a message dropped unread, past the limit with no answer left, counts 1).',
    }),
  }),
  WsCooldownStarted: Event('WsCooldownStarted', 1, 'Too many new WebSocket connections in one second: new connections of the key are blocked until `until`.', {
    accountId: NonEmpty(),
    keyId: NonEmpty(),
    network: NonEmpty(),
    instance: keyScope.instance,
    reason: Type.Literal('ws-connection-rate'),
    until: MsSinceEpoch('New connections are refused until then, ms since the epoch, on every instance.'),
    connections: NonNegativeInteger({ description: 'Connections attempted within windowMs, the refused one included.' }),
    windowMs: Type.Integer({ minimum: 1 }),
  }),
  WsPenaltyImposed: Event('WsPenaltyImposed', 1, 'Repeated malformed or unsupported WebSocket messages: messages of the key are refused until `until`.', {
    accountId: NonEmpty(),
    keyId: NonEmpty(),
    network: NonEmpty(),
    instance: keyScope.instance,
    reason: Type.Literal('ws-bad-messages'),
    until: MsSinceEpoch(),
    badMessages: NonNegativeInteger({ description: 'Bad messages that imposed it, within windowMs.' }),
    windowMs: Type.Integer({ minimum: 1 }),
  }),
  NotificationsRecorded: Event('NotificationsRecorded', 2, 'Subscription notifications sent to a key, per network, node kind and interval.', {
    ...keyScope,
    notifications: NonNegativeInteger(),
    bytesOut: NonNegativeInteger(),
    units: Type.Optional(
      NonNegativeInteger({
        description:
          'Compute units of those notifications: 1 per 25 bytes of each, rounded up (docs/costs.md). Version 2; absent in version 1, ' +
          'whose notifications were not charged (they count 0 units).',
      }),
    ),
  }),
  SignedIn: Event(
    'SignedIn',
    2,
    'A wallet signed in with SIWE (EIP-4361); the first SignedIn of a nonce wins (the projection ignores later ones), so a replayed ' +
      "message never opens a second session, even from another instance. Only the session's hash is here, never its token.",
    {
      accountId: NonEmpty(),
      wallet: Address('Lower-case 0x address that signed.'),
      nonce: Type.String({ pattern: '^[A-Za-z0-9]{8,}$', description: 'The SIWE nonce the message carried (public once used).' }),
      sessionHash: Sha256Hex({ description: 'hex SHA-256 of the session token (the cookie).' }),
      expiresAt: MsSinceEpoch(),
      chainId: Type.Optional(Type.Integer({ minimum: 1, description: 'The chain id the message named. Version 2; absent in version 1.' })),
      signer: Type.Optional(
        StringEnum(['eoa', 'contract'], {
          description:
            "Who vouched for the signature: the address's own key, or a contract wallet (ERC-1271, ERC-6492) on `chainId`. The first " +
            "contract sign-in binds the account to its chain: a contract's signature from another chain is refused. Version 2; absent in version 1.",
        }),
      ),
    },
  ),
  SignedOut: Event('SignedOut', 1, 'A dashboard session ended before its expiry (the owner signed out).', {
    accountId: NonEmpty(),
    sessionHash: Sha256Hex(),
  }),
  FreePlanClaimed: Event('FreePlanClaimed', 1, 'A free plan was taken, once per account (wallet); the first claim wins.', {
    accountId: NonEmpty(),
    planId: NonEmpty(),
    attempt: NonEmpty({ description: 'Random per request: tells the request that made the claim that it won.' }),
  }),
  InvoiceCreated: Event('InvoiceCreated', 2, 'A paid plan was chosen: the amount due in an ERC-20 token.', {
    accountId: NonEmpty(),
    invoiceId: NonEmpty(),
    planId: NonEmpty(),
    nodes: Type.Array(entitlementSchema, { description: 'The nodes chosen (Tier 1 and 2); empty: all the plan allows.' }),
    network: NonEmpty({ description: 'Network slug of the payment.' }),
    token: Address('Lower-case 0x address of the ERC-20 token.'),
    treasury: Address('Lower-case 0x address that receives the payment.'),
    amount: UintString("Amount due in the token's smallest unit, as a decimal string (it may not fit a double)."),
    decimals: Type.Integer({
      minimum: 0,
      maximum: 255,
      description: "The token's decimals, read from the contract when the invoice was made.",
    }),
    priceUsd: Type.Number({ minimum: 0 }),
    expiresAt: Type.Optional(
      MsSinceEpoch(
        'Until when the terms hold: a transfer mined in a later block does not pay the invoice (PaymentUnmatched). Version 2; absent ' +
          'in version 1 (no expiry).',
      ),
    ),
  }),
  PaymentConfirmed: Event(
    'PaymentConfirmed',
    2,
    'An ERC-20 transfer paid an invoice; one transfer (tx hash, log index) pays one invoice: the id comes from (network, tx hash, ' +
      'log index) only, so one transfer offered for two invoices is one fact, and the log keeps the first.',
    {
      accountId: NonEmpty(),
      invoiceId: NonEmpty(),
      ...tokenTransferSchema.properties,
      minedAt: Type.Optional(
        MsSinceEpoch("Timestamp of the transfer's block, ms since the epoch (at most the invoice's expiresAt). Version 2; absent in version 1."),
      ),
      attempt: NonEmpty({ description: 'Random per request: tells the request whose event the log kept that it won.' }),
    },
  ),
  PaymentUnmatched: Event(
    'PaymentUnmatched',
    1,
    'A transfer offered for an invoice was mined after the invoice expired: recorded (not lost), it did not pay that invoice and ' +
      'may pay a fresh one. Operators see it (`tollgate events`), the owner sees it on the invoice, and the same transfer can still ' +
      'pay a fresh invoice at the terms of the day (it is not marked used).',
    {
      accountId: NonEmpty(),
      invoiceId: NonEmpty(),
      reason: StringEnum(['invoice-expired']),
      invoiceExpiresAt: MsSinceEpoch("The invoice's expiresAt, ms since the epoch."),
      ...tokenTransferSchema.properties,
      minedAt: MsSinceEpoch("Timestamp of the transfer's block, ms since the epoch (later than invoiceExpiresAt)."),
    },
  ),
  PrivateNodeRequested: Event('PrivateNodeRequested', 1, 'The owner asked for a Private Node; the operator attaches one (DedicatedNodeAttached).', {
    accountId: NonEmpty(),
    nodes: Type.Array(entitlementSchema, { description: 'What the owner would like (network, kind).' }),
  }),
  DomainsRestricted: Event('DomainsRestricted', 1, 'The browser domains a key may be used from (empty: any).', {
    accountId: NonEmpty(),
    keyId: NonEmpty(),
    domains: Type.Array(NonEmpty(), { description: 'Lower-case host names, `*.example.com` for subdomains, optionally with `:port`.' }),
  }),
  KeyRestricted: Event(
    'KeyRestricted',
    1,
    "A key's restrictions besides its domains, as a whole: each list replaces the key's former one; an absent or empty list: no rule " +
      "of that type. Entries of one list are OR'd, lists AND'd (docs/keys.md).",
    {
      accountId: NonEmpty(),
      keyId: NonEmpty(),
      methods: Type.Array(NonEmpty(), { description: 'Methods the key may call (`eth_call`, or a namespace `debug_*`); empty: any.' }),
      deniedMethods: Type.Array(NonEmpty(), { description: 'Methods the key may not call (same forms); empty: none denied.' }),
      contracts: Type.Array(Address(), { description: 'Addresses the calls may name, method by method as docs/keys.md says; empty: any.' }),
      ips: Type.Array(NonEmpty(), { description: 'Client addresses or CIDR ranges (IPv4, IPv6) the key may be used from; empty: any.' }),
      userAgents: Type.Array(NonEmpty(), { description: 'Texts one of which the User-Agent must contain (case-sensitive); empty: any.' }),
    },
  ),
  JwtKeyRegistered: Event(
    'JwtKeyRegistered',
    1,
    "A public key the account's own tokens may be signed with (docs/keys.md, signed tokens); at most 3 per account, one per kid.",
    {
      accountId: NonEmpty(),
      kid: Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$', description: "The id a token's header names." }),
      alg: Type.Union([Type.Literal('ES256'), Type.Literal('RS256'), Type.Literal('EdDSA')], {
        description: 'The one algorithm tokens of this key are checked with.',
      }),
      publicKey: NonEmpty({ description: 'SPKI PEM of the public key (never a private key).' }),
    },
  ),
  JwtKeyRemoved: Event('JwtKeyRemoved', 1, 'A registered public key removed: tokens it signed no longer pass.', {
    accountId: NonEmpty(),
    kid: NonEmpty(),
  }),
  KeyTokenRequired: Event('KeyTokenRequired', 1, 'Whether a key is refused without a signed token (the key alone no longer passes).', {
    accountId: NonEmpty(),
    keyId: NonEmpty(),
    required: Type.Boolean(),
  }),
  DedicatedNodeAttached: Event('DedicatedNodeAttached', 1, 'The operator attached a dedicated node to an account.', {
    accountId: NonEmpty(),
    network: NonEmpty(),
    kind: NodeKind(),
    url: NonEmpty(),
    ws: Nullable(NonEmpty({ description: 'WebSocket URL; null when the node has none.' })),
  }),
}
