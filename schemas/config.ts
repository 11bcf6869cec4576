import type { JsonSchema } from './validate.js'

/**
 * The configuration file's schema: the single description of its shape and of its defaults
 * (src/config/types.ts is the TypeScript view of the same thing). `npm run schemas` writes it
 * to schemas/config.schema.json for editors and other tools.
 */

const positiveInteger = { type: 'integer', minimum: 1 } as const satisfies JsonSchema

/** `burst` calls at once, then one more every `everyMs` (a token bucket). */
function bucketOf(burst: number, everyMs: number) {
  return {
    type: 'object',
    properties: {
      burst: { ...positiveInteger, default: burst, description: 'Calls admitted at once.' },
      everyMs: { ...positiveInteger, default: everyMs, description: 'One more call is admitted every everyMs.' },
    },
    additionalProperties: false,
    default: {},
  } as const satisfies JsonSchema
}

/** A dashboard API limit: per client IP, and per signed-in account where the calls have one. */
function limitOf(defaults: { perIp: [number, number]; perAccount?: [number, number] }) {
  return {
    type: 'object',
    properties: {
      perIp: bucketOf(...defaults.perIp),
      ...(defaults.perAccount === undefined ? {} : { perAccount: bucketOf(...defaults.perAccount) }),
    },
    additionalProperties: false,
    default: {},
  } as const satisfies JsonSchema
}

const upstreamSchema = {
  type: 'object',
  description: 'One node behind the gateway.',
  properties: {
    url: { type: 'string', pattern: '^https?://[^\\s/]+', description: 'HTTP JSON-RPC URL of the node.' },
    ws: {
      type: 'string',
      pattern: '^wss?://[^\\s/]+',
      description: 'WebSocket URL of the node, when it offers one: calls are multiplexed over it.',
    },
    kind: { enum: ['full', 'archive'], description: 'Full node, or archive node (historical state, trace_*).' },
    name: { type: 'string', minLength: 1, description: 'Name for logs and metrics; default: host:port of url.' },
  },
  required: ['url', 'kind'],
  additionalProperties: false,
} as const satisfies JsonSchema

const networkSchema = {
  type: 'object',
  properties: {
    chainId: { ...positiveInteger, description: 'EVM chain id (eth-1: 1, bsc-1: 56, pol-1: 137).' },
    upstreams: { type: 'array', minItems: 1, items: upstreamSchema },
    finalityDepth: {
      ...positiveInteger,
      description: "Blocks below the head taken as final when the network's nodes do not know the `finalized` tag (default cache.finalityDepth).",
    },
  },
  required: ['chainId', 'upstreams'],
  additionalProperties: false,
} as const satisfies JsonSchema

export const configSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'urn:tollgate:config',
  title: 'Tollgate configuration',
  type: 'object',
  properties: {
    $schema: { type: 'string', description: 'Lets editors find this schema; ignored by the gateway.' },
    listen: {
      type: 'object',
      properties: {
        host: { type: 'string', minLength: 1, default: '127.0.0.1' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 8080, description: '0: any free port.' },
      },
      additionalProperties: false,
      default: {},
    },
    admin: {
      type: 'object',
      description: 'The admin listener: /metrics (Prometheus), /healthz and /readyz, apart from the RPC port.',
      properties: {
        listen: {
          type: 'object',
          properties: {
            host: {
              type: 'string',
              minLength: 1,
              default: '127.0.0.1',
              description: 'Loopback by default; any other address needs TOLLGATE_ADMIN_TOKEN (the bearer token of /metrics).',
            },
            port: { type: 'integer', minimum: 0, maximum: 65535, default: 9090, description: '0: any free port.' },
          },
          additionalProperties: false,
          default: {},
        },
      },
      additionalProperties: false,
      default: {},
    },
    publicUrl: {
      type: 'string',
      pattern: '^https?://[^\\s/]+',
      description: 'Base URL clients use (behind TLS termination: https://rpc.example.com); default from listen.',
    },
    dataDir: { type: 'string', minLength: 1, default: './data', description: 'LMDB projections, embedded log, outbox.' },
    events: {
      type: 'object',
      properties: {
        nats: {
          description: 'NATS server URL(s); absent: the embedded log in dataDir.',
          anyOf: [
            { type: 'string', pattern: '^(nats|tls|ws|wss)://[^\\s]+$' },
            { type: 'array', minItems: 1, items: { type: 'string', pattern: '^(nats|tls|ws|wss)://[^\\s]+$' } },
          ],
        },
        stream: { type: 'string', pattern: '^[A-Za-z0-9_-]+$', default: 'TOLLGATE', description: 'JetStream stream name.' },
        subjectPrefix: {
          type: 'string',
          pattern: '^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$',
          default: 'tollgate',
          description: 'Events go to <prefix>.<category>.<type>.',
        },
        replicas: {
          type: 'integer',
          minimum: 1,
          maximum: 5,
          default: 1,
          description: 'JetStream stream replicas (1 on a single server, 3 in a production cluster).',
        },
      },
      additionalProperties: false,
      default: {},
    },
    networks: {
      type: 'object',
      description: 'Networks by slug: a short lowercase name, a hyphen and a number (eth-1).',
      propertyNames: { pattern: '^[a-z][a-z0-9]*-[0-9]+$' },
      additionalProperties: networkSchema,
    },
    plans: {
      type: 'object',
      properties: {
        catalog: {
          type: 'string',
          minLength: 1,
          default: 'default',
          description: '"default" (set A limits), "set-b", or the path of a plan catalog JSON file.',
        },
      },
      additionalProperties: false,
      default: {},
    },
    limits: {
      type: 'object',
      properties: {
        maxBodyBytes: { ...positiveInteger, default: 1048576, description: 'Largest request body in bytes (413 beyond).' },
        maxBatch: { ...positiveInteger, default: 100, description: 'Most calls in one batch (413 beyond).' },
        upstreamTimeoutMs: { ...positiveInteger, default: 30000, description: "Time-out of one upstream call: of the node's whole answer, not only its first byte." },
        maxUpstreamBytes: {
          ...positiveInteger,
          default: 33554432,
          description: "Largest answer read from a node for one call or batch (32 MiB, as geth's own client reads); a larger one is dropped as it comes and the call gets 502 -32023.",
        },
        batchConcurrency: { ...positiveInteger, default: 16, description: 'Calls of one batch sent upstream at once.' },
        bodyTimeoutMs: {
          type: 'integer',
          minimum: 100,
          maximum: 8000,
          default: 5000,
          description:
            'How long the whole request body may take to arrive after the headers; then 408 and the connection is closed. At most 8000: uWebSockets.js itself drops a connection whose body stalls (under 16 KB/s) after 8 to 12 s, without an answer.',
        },
        queueMs: {
          type: 'integer',
          minimum: 0,
          maximum: 10000,
          default: 250,
          description: "How long a call over a key's rate may wait for its token before it is rejected with 429 (0: no queue).",
        },
        ipThrottle: {
          type: 'object',
          description: 'A client IP whose calls keep being rejected by rate limits is throttled for every key.',
          properties: {
            rejections: { ...positiveInteger, default: 2000, description: 'Rejected calls within windowMs that throttle the IP.' },
            windowMs: { ...positiveInteger, default: 10000 },
            durationMs: { ...positiveInteger, default: 60000, description: 'How long the IP stays throttled.' },
          },
          additionalProperties: false,
          default: {},
        },
      },
      additionalProperties: false,
      default: {},
    },
    ws: {
      type: 'object',
      description: 'WebSocket endpoint (/ws/<network>): the limits per API key of the spec, and per connection.',
      properties: {
        maxConnectionsPerKey: { ...positiveInteger, default: 50, description: 'Open connections per key on one instance; the next is refused (429).' },
        newConnectionsPerSecond: { ...positiveInteger, default: 15, description: 'New connections per key within any second; one more starts the cooldown.' },
        cooldownMs: { ...positiveInteger, default: 60000, description: 'How long new connections of a key are blocked after too many in one second.' },
        messagesPerSecond: {
          ...positiveInteger,
          default: 500,
          description: "Messages per second per key across its connections (each call of a batch counts); capped by the plan's full-node rps, unlimited for unlimited plans.",
        },
        tolerance: { type: 'number', minimum: 0, maximum: 1, default: 0.1, description: 'Traffic up to this fraction above messagesPerSecond is still served.' },
        badMessages: { ...positiveInteger, default: 20, description: 'Malformed or unsupported messages tolerated per badMessagesWindowMs; one more imposes the penalty.' },
        badMessagesWindowMs: { ...positiveInteger, default: 60000 },
        penaltyMs: { ...positiveInteger, default: 300000, description: 'How long messages of a key are refused after the penalty.' },
        maxMessageBytes: { ...positiveInteger, default: 1048576, description: 'Largest message a client may send; beyond it the connection is closed with 1009.' },
        maxBufferedBytes: {
          ...positiveInteger,
          default: 4194304,
          description: 'Bytes waiting for a slow client beyond which it is disconnected (1008) rather than silently losing messages.',
        },
        idleTimeoutSec: {
          anyOf: [{ const: 0 }, { type: 'integer', minimum: 8, maximum: 960 }],
          default: 60,
          description: 'A connection that sends nothing (pongs to our pings included) for this long is closed; 0: never (uWS needs 0 or at least 8).',
        },
        maxSubscriptionsPerConnection: {
          ...positiveInteger,
          default: 100,
          description: 'Subscriptions one connection may hold; the next eth_subscribe gets -32033. Each distinct logs filter is an upstream subscription of its own.',
        },
      },
      additionalProperties: false,
      default: {},
    },
    routing: {
      type: 'object',
      properties: {
        fullNodeWindowBlocks: {
          ...positiveInteger,
          default: 128,
          description: 'Blocks of state full nodes keep; calls for older state go to archive nodes.',
        },
      },
      additionalProperties: false,
      default: {},
    },
    heavy: {
      type: 'object',
      description: 'Heavy calls (eth_getLogs, eth_getBlockReceipts, debug_trace*, trace_*): their time-out and eth_getLogs splitting.',
      properties: {
        timeoutMs: {
          ...positiveInteger,
          default: 60000,
          description: 'Time-out of a heavy call, which is also its whole budget: one that timed out is not tried on another node.',
        },
        methodTimeoutMs: {
          type: 'object',
          description: 'Time-outs of single methods, overriding timeoutMs (e.g. {"debug_traceBlockByNumber": 120000}).',
          propertyNames: { pattern: '^[a-z0-9]+_[A-Za-z0-9]+$' },
          additionalProperties: positiveInteger,
          default: {},
        },
        getLogs: {
          type: 'object',
          properties: {
            chunkBlocks: { ...positiveInteger, default: 2000, description: 'A wider eth_getLogs range is split into chunks of this many blocks.' },
            maxRangeBlocks: { ...positiveInteger, default: 100000, description: 'Widest eth_getLogs range served (wider: an error naming a range that works).' },
            maxLogs: { ...positiveInteger, default: 100000, description: 'Most logs one eth_getLogs call returns (more: an error naming a range that works).' },
            concurrency: { ...positiveInteger, default: 4, description: 'Chunks of one call fetched at once.' },
          },
          additionalProperties: false,
          default: {},
        },
      },
      additionalProperties: false,
      default: {},
    },
    cache: {
      type: 'object',
      description: 'Answers that can no longer change, in LMDB under dataDir/cache, shared by the gateway processes of the host.',
      properties: {
        enabled: { type: 'boolean', default: true },
        path: {
          type: 'string',
          minLength: 1,
          description: 'LMDB folder of the cache (default dataDir/cache); gateways on one host that name the same folder share it.',
        },
        maxBytes: { ...positiveInteger, default: 1073741824, description: 'Stored answer bytes above which the oldest are evicted.' },
        finalityDepth: {
          ...positiveInteger,
          default: 64,
          description: 'Blocks below the head taken as final on networks whose nodes do not know the `finalized` tag.',
        },
        finalityPollMs: { ...positiveInteger, default: 2000, description: 'How often the finalized block is read (and checked for a reorg).' },
      },
      additionalProperties: false,
      default: {},
    },
    health: {
      type: 'object',
      description: 'When a node is taken out of its pool, and how it comes back.',
      properties: {
        pollMs: { ...positiveInteger, default: 2000, description: 'How often every node is asked for its head (its lag, and the probe of a node that is out).' },
        maxLagBlocks: { ...positiveInteger, default: 10, description: 'Blocks behind the best node of the network that take a node out; back within half of it.' },
        failureThreshold: { ...positiveInteger, default: 3, description: 'Consecutive transport failures that take a node out.' },
        maxErrorRate: { type: 'number', minimum: 0.01, maximum: 1, default: 0.5, description: 'Share of failed calls among its last 40 that takes a node out.' },
        cooldownMs: { ...positiveInteger, default: 5000, description: 'How long a failing node stays out before a probe.' },
      },
      additionalProperties: false,
      default: {},
    },
    hedge: {
      type: 'object',
      description: 'Hedged reads: a read slower than its node\'s p95 latency is also asked of another node; the first answer wins.',
      properties: {
        enabled: { type: 'boolean', default: false },
        minDelayMs: { ...positiveInteger, default: 50, description: 'Never hedge sooner than this.' },
        maxDelayMs: { ...positiveInteger, default: 2000, description: 'Hedge no later than this, whatever the p95.' },
      },
      additionalProperties: false,
      default: {},
    },
    shutdownMs: {
      ...positiveInteger,
      default: 10_000,
      description:
        'Longest graceful stop (SIGTERM/SIGINT): calls in flight are answered, then the usage and the outbox are flushed and the stores closed; past this the process exits anyway.',
    },
    workers: {
      anyOf: [{ type: 'integer', minimum: 1, maximum: 256 }, { const: 'auto' }],
      default: 1,
      description:
        'Gateway processes on this machine, on the one port (Linux spreads the connections): "auto" is one per core. They are instances of one fleet: they share each key\'s limits (over NATS when events.nats is set, else through `tollgate start`, which supervises them). Worker i has its admin listener on admin.listen.port + i.',
    },
    fleet: {
      type: 'object',
      description:
        'Instances that share one event stream (events.nats and events.stream) are one fleet: they share each key\'s limits over NATS. Without NATS, an instance is a fleet of one.',
      properties: {
        syncMs: { ...positiveInteger, default: 50, description: 'How often an instance sends what it admitted to the others: a key may exceed its plan by what the others admitted in this time.' },
        heartbeatMs: { ...positiveInteger, default: 1000, description: 'How often an instance announces itself.' },
        silentMs: { ...positiveInteger, default: 3000, description: 'An instance not heard for this long is dropped: its connections stop counting.' },
      },
      additionalProperties: false,
      default: {},
    },
    trustProxy: {
      type: 'boolean',
      default: false,
      description: 'Take the client IP from the last X-Forwarded-For entry (behind nginx); off: the socket address.',
    },
    usage: {
      type: 'object',
      properties: {
        intervalMs: {
          type: 'integer',
          minimum: 100,
          default: 1000,
          description: 'Usage and rate-limit events are aggregated over this interval.',
        },
      },
      additionalProperties: false,
      default: {},
    },
    payments: {
      type: 'object',
      description: 'On-chain payment of paid plans in a USD stablecoin (ERC-20); absent: paid plans are unavailable.',
      properties: {
        network: { type: 'string', minLength: 1, description: 'Network slug (one of networks) the token lives on.' },
        token: { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$', description: 'ERC-20 contract address of the USD stablecoin (its decimals are read from it).' },
        treasury: { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$', description: 'Address that receives payments.' },
        confirmations: {
          type: 'integer',
          minimum: 1,
          default: 12,
          description: 'Blocks, the transfer\'s included, before a payment counts (a reorg shallower than this cannot undo it).',
        },
        invoiceTtlMs: {
          type: 'integer',
          minimum: 60000,
          default: 1800000,
          description:
            "How long an invoice's terms (amount, token, treasury) hold: a transfer mined in a later block does not pay it; it is recorded (PaymentUnmatched) and can pay a fresh invoice.",
        },
      },
      required: ['network', 'token', 'treasury'],
      additionalProperties: false,
    },
    dashboard: {
      type: 'object',
      properties: {
        sessionTtlMs: {
          type: 'integer',
          minimum: 60000,
          default: 86400000,
          description: 'How long a dashboard sign-in lasts (the session cookie\'s expiry).',
        },
        signatureChecks: {
          type: 'object',
          description: "A contract wallet's sign-in signature (ERC-1271, ERC-6492) is an eth_call on our own node: its bounds.",
          properties: {
            gas: { type: 'integer', minimum: 21000, default: 1000000, description: 'Gas cap of the eth_call (its `gas` field).' },
            timeoutMs: { ...positiveInteger, default: 5000, description: 'How long a check may take on our nodes, failovers included.' },
          },
          additionalProperties: false,
          default: {},
        },
        limits: {
          type: 'object',
          description:
            'Rate limits of the dashboard API (/api/), per client IP (see trustProxy) and per signed-in account: `burst` calls at once, then one more every `everyMs`. Past them: 429 RATE_LIMITED with Retry-After.',
          properties: {
            maxTracked: {
              ...positiveInteger,
              default: 20000,
              description: 'Most clients each limit remembers at once; past it the least recently seen is forgotten (its limit starts afresh).',
            },
            api: { ...limitOf({ perIp: [120, 250] }), description: 'Every call to /api/.' },
            signIn: { ...limitOf({ perIp: [10, 6000] }), description: 'Sign-in attempts (POST /api/siwe/verify).' },
            contractChecks: { ...limitOf({ perIp: [5, 60000] }), description: 'Contract-wallet signature checks, each an eth_call on our node.' },
            newAccounts: { ...limitOf({ perIp: [5, 720000] }), description: 'Sign-ins that create an account (a new wallet).' },
            keys: { ...limitOf({ perIp: [20, 180000], perAccount: [10, 360000] }), description: 'Key regenerations and allowlist changes.' },
            invoices: { ...limitOf({ perIp: [20, 180000], perAccount: [10, 360000] }), description: 'Plan choices (an invoice, a free plan, a private node request).' },
            paymentChecks: { ...limitOf({ perIp: [60, 1000], perAccount: [30, 2000] }), description: 'Payment checks (POST /api/invoices/<id>/payment), each a few calls to our node.' },
          },
          additionalProperties: false,
          default: {},
        },
      },
      additionalProperties: false,
      default: {},
    },
  },
  required: ['networks'],
  additionalProperties: false,
} as const satisfies JsonSchema
