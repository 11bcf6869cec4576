import { Type, type IntegerOptions, type TProperties } from '@sinclair/typebox'
import { MapOf, Strict, withDefaultsOptional } from './json-schema.js'
import { NodeKind } from './node-kind.js'
import { wsKeyLimitsSchema } from './ws-key-limits.js'

/**
 * The configuration file's schema: the single description of its shape, its defaults and the
 * meaning of each field. `Config` (src/config/types.ts) is its TypeScript type after defaults are
 * filled in; `npm run schemas` writes it to schemas/config.schema.json for editors and other tools.
 *
 * A property with a `default` is declared required, so that the TypeScript type has it, and
 * withDefaultsOptional() takes it out of `required` in the published schema: a file may leave it out.
 */

const PositiveInteger = (options: IntegerOptions = {}) => Type.Integer({ minimum: 1, ...options })
const Port = (port: number, options: IntegerOptions = {}) =>
  Type.Integer({ minimum: 0, maximum: 65535, default: port, description: '0: any free port.', ...options })
const HTTP_URL = '^https?://[^\\s/]+'
const NATS_URL = '^(nats|tls|ws|wss)://[^\\s]+$'
const ADDRESS = '^0x[0-9a-fA-F]{40}$'
/** A method name, or a prefix of one and `*` (src/rpc/forward-methods.ts). */
const FORWARD_METHOD_PATTERN = '^[a-z0-9]+_[A-Za-z0-9_]*\\*?$'

/** A section of the file: its fields refused when unknown, the section itself optional (its fields have defaults). */
const Section = <P extends TProperties>(properties: P, description?: string) =>
  Strict(properties, { ...(description === undefined ? {} : { description }), default: {} })

/** `burst` calls at once, then one more every `everyMs` (a token bucket). */
function Bucket(burst: number, everyMs: number) {
  return Section({
    burst: PositiveInteger({ default: burst, description: 'Calls admitted at once.' }),
    everyMs: PositiveInteger({ default: everyMs, description: 'One more call is admitted every everyMs.' }),
  })
}

/** A dashboard API limit per client IP. */
const IpLimit = (perIp: [number, number], description: string) => Section({ perIp: Bucket(...perIp) }, description)

/** A dashboard API limit per client IP and per signed-in account. */
const IpAndAccountLimit = (perIp: [number, number], perAccount: [number, number], description: string) =>
  Section({ perIp: Bucket(...perIp), perAccount: Bucket(...perAccount) }, description)

const upstreamSchema = Strict(
  {
    url: Type.String({ pattern: HTTP_URL, description: 'HTTP JSON-RPC URL of the node.' }),
    ws: Type.Optional(
      Type.String({
        pattern: '^wss?://[^\\s/]+',
        description: 'WebSocket URL of the node, when it offers one: calls are multiplexed over it.',
      }),
    ),
    kind: NodeKind({ description: 'Full node, or archive node (historical state, trace_*).' }),
    name: Type.Optional(Type.String({ minLength: 1, description: 'Name for logs and metrics; default: host:port of url.' })),
    maxInFlight: Type.Optional(
      PositiveInteger({
        description:
          "Most calls in flight to this node at once, from the whole fleet (each instance or worker takes max(1, floor(maxInFlight / instances))); set it to the node's RPC workers. Calls past it wait in per-account queues served in turn; one account holds at most three quarters of the slots. Default: no limit.",
      }),
    ),
    coalesce: Type.Optional(
      Type.Boolean({
        description:
          'Over HTTP, single calls that arrive together are sent as one JSON-RPC batch of up to 20 (default true); false: one request per call, for a node that bills or limits batches apart.',
      }),
    ),
  },
  { description: 'One node behind the gateway.' },
)

const networkSchema = Strict({
  chainId: PositiveInteger({ description: 'EVM chain id (eth-1: 1, bsc-1: 56, pol-1: 137).' }),
  upstreams: Type.Array(upstreamSchema, { minItems: 1, description: 'The nodes of the network, at least one.' }),
  finalityDepth: Type.Optional(
    PositiveInteger({
      description:
        "Blocks below the head a block must be to be cached as final, whatever the nodes' `finalized` tag says; head minus this is the finalized block when they do not know the tag (default cache.finalityDepth).",
    }),
  ),
  broadcastTransactions: Type.Optional(
    Type.Boolean({
      description:
        'Send eth_sendRawTransaction to every healthy node of the kind at once, not to one (default false): the first node that accepts it answers, the others finish in the background. For nodes with few peers, or that drop transactions.',
    }),
  ),
  forwardMethods: Type.Optional(
    Type.Array(Type.String({ pattern: FORWARD_METHOD_PATTERN, maxLength: 128 }), {
      maxItems: 256,
      description:
        "Methods outside the method table (docs/costs.md) this network's nodes are sent (default none: such a method gets -32601 without a node being asked): exact names, or a prefix ending in * (debug_getRaw*). Each counts as a heavy call (heavy.atOnce, heavy.timeoutMs) and costs 500 units unless methodCosts names it. A method that operates the node (docs/costs.md, Refused methods) stays refused whatever a pattern matches.",
    }),
  ),
  verify: Type.Optional(
    Type.Union([Type.Literal('off'), Type.Literal('reads'), Type.Literal('calls')], {
      description:
        "Check node answers before they reach a client (default off): `reads` proves eth_getBalance, eth_getTransactionCount, eth_getCode, eth_getStorageAt and eth_getProof against a header the network's nodes agree on (one eth_getProof per read, plus eth_getCode for code), checks blocks, transactions (by hash, by block and index) and receipts (eth_getBlockReceipts, eth_getTransactionReceipt) against its roots, and proves eth_getLogs complete (header blooms, candidate blocks' receipts; at most 2,000 blocks and 100 candidate blocks a call). `calls` also runs eth_call and eth_estimateGas in the gateway's EVM on proven state (an estimate must be enough, and at most 2% above the least gas that works). An answer that fails goes to another node; when none passes, the client gets ANSWER_UNVERIFIED. See docs/verified-answers.md.",
    }),
  ),
  verifyCheckpoint: Type.Optional(
    Strict(
      {
        number: Type.Integer({ minimum: 0, description: 'The block number of the checkpoint.' }),
        hash: Type.String({
          pattern: '^0x[0-9a-fA-F]{64}$',
          description: 'Its block hash, from a source the operator trusts (a block explorer, another client).',
        }),
      },
      {
        description:
          'With verify on: the headers reads are proven against must also be linked by parent hashes to this block (a network of one node, or of one provider, is then held to the chain the operator named, not only to what its nodes agree on). A header more than 10,000 blocks from the nearest header linked to it is refused (ANSWER_UNVERIFIED, HEADER_AGREEMENT): keep the checkpoint recent. See docs/verified-answers.md.',
      },
    ),
  ),
  consensus: Type.Optional(
    Strict(
      {
        participants: PositiveInteger({ description: 'Nodes of the kind asked each call, at once (at least agreement).' }),
        agreement: PositiveInteger({ description: 'Nodes that must give the same answer (as a JSON value) for the client to get it.' }),
        methods: Type.Optional(
          Type.Array(Type.String({ pattern: '^[a-z0-9]+_[A-Za-z0-9]+$' }), {
            minItems: 1,
            description:
              'Methods checked (default: state reads, blocks, transactions, receipts and logs: eth_getBalance, eth_getCode, eth_getStorageAt, eth_getTransactionCount, eth_getProof, eth_call, eth_getBlockByNumber, eth_getBlockByHash, eth_getBlockReceipts, eth_getTransactionByHash, eth_getTransactionReceipt, eth_getLogs).',
          }),
        ),
        disputeWindowMs: Type.Optional(PositiveInteger({ description: "Window in which a node's answers against an agreement are counted (default 600000)." })),
        disputeThreshold: Type.Optional(
          PositiveInteger({ description: 'Answers against an agreement within the window that make a node sit out (default 5).' }),
        ),
        sitOutMs: Type.Optional(PositiveInteger({ description: 'How long a node past the threshold takes no call (default 1800000).' })),
      },
      {
        description:
          'Ask several nodes and answer only what enough of them agree on (off by default): for nodes you do not fully trust. The client gets the first answer `agreement` nodes gave, without waiting for the rest; no agreement is the error NODES_DISAGREE. See docs/upstream-selection.md.',
      },
    ),
  ),
})

export const configSchema = withDefaultsOptional(
  Strict(
    {
      $schema: Type.Optional(Type.String({ description: 'Lets editors find this schema; ignored by the gateway.' })),
      listen: Section(
        {
          host: Type.String({ minLength: 1, default: '127.0.0.1' }),
          port: Port(8080),
        },
        'The RPC port: JSON-RPC over HTTP and WebSocket, the dashboard, /healthz and /readyz.',
      ),
      admin: Section(
        {
          listen: Section({
            host: Type.String({
              minLength: 1,
              default: '127.0.0.1',
              description: 'Loopback by default; any other address needs TOLLGATE_ADMIN_TOKEN (the bearer token of /metrics).',
            }),
            port: Port(9090),
          }),
        },
        'The admin listener: /metrics (Prometheus), /healthz and /readyz, apart from the RPC port.',
      ),
      publicUrl: Type.Optional(
        Type.String({
          pattern: HTTP_URL,
          description: 'Base URL clients use (behind TLS termination: https://rpc.example.com); default from listen.',
        }),
      ),
      dataDir: Type.String({
        minLength: 1,
        default: './data',
        description: 'LMDB projections (state/), embedded log (log/), outbox (outbox/).',
      }),
      events: Section({
        nats: Type.Optional(
          Type.Union([Type.String({ pattern: NATS_URL }), Type.Array(Type.String({ pattern: NATS_URL }), { minItems: 1 })], {
            description: 'NATS server URL(s); absent: the embedded log in dataDir.',
          }),
        ),
        stream: Type.String({ pattern: '^[A-Za-z0-9_-]+$', default: 'TOLLGATE', description: 'JetStream stream name (created on start).' }),
        subjectPrefix: Type.String({
          pattern: '^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$',
          default: 'tollgate',
          description: "Events go to `<prefix>.<category>.<accountId>.<Type>`, an account's own to `<prefix>.accounts.<accountId>.events`.",
        }),
        replicas: Type.Integer({
          minimum: 1,
          maximum: 5,
          default: 1,
          description: 'JetStream stream replicas (1 on a single server, 3 in a production cluster).',
        }),
        partitions: Type.Integer({
          minimum: 1,
          maximum: 64,
          default: 1,
          description:
            'Usage partitions P: above 1, usage events go to P streams of their own (`<stream>_USAGE_<p>`, subjects `<prefix>-usage.<p>.<accountId>.<Type>`, p by the account), read in parallel; the other events stay in the one stream. Needs `events.nats`; fixed for the life of a stream (see docs/events.md).',
        }),
        outageLogEveryMs: Type.Integer({
          minimum: 1000,
          default: 30000,
          description:
            'While NATS is unreachable (calls are served from the projections, events wait in the outbox), how often the outage is logged with the events waiting: one warning when it begins, this line while it lasts, one when it ends.',
        }),
      }),
      networks: MapOf('^[a-z][a-z0-9]*-[0-9]+$', networkSchema, {
        description: 'Networks by slug: a short lowercase name, a hyphen and a number (eth-1).',
      }),
      plans: Section({
        catalog: Type.String({
          minLength: 1,
          default: 'default',
          description: '"default" (set A limits), "set-b", or the path of a plan catalog JSON file.',
        }),
      }),
      limits: Section({
        maxBodyBytes: PositiveInteger({ default: 1048576, description: 'Largest request body in bytes (413 beyond).' }),
        maxBatch: PositiveInteger({ default: 100, description: 'Most calls in one batch (413 beyond).' }),
        upstreamTimeoutMs: PositiveInteger({
          default: 30000,
          description: "Time-out of one upstream call: of the node's whole answer, not only its first byte.",
        }),
        capacityWaitMs: PositiveInteger({
          default: 1000,
          description:
            "Longest a call waits for a free slot on a node that has upstreams[].maxInFlight, before 503 NODES_BUSY with Retry-After (within the call's own time-out).",
        }),
        maxUpstreamBytes: PositiveInteger({
          default: 33554432,
          description:
            "Largest answer read from a node for one call or batch (32 MiB, as geth's own client reads); a larger one is dropped as it " +
            'comes and the call gets 502 -32023.',
        }),
        batchConcurrency: PositiveInteger({ default: 16, description: 'Calls of one batch sent upstream at once.' }),
        maxFiltersPerKey: PositiveInteger({
          default: 500,
          description:
            'Live filters (eth_newFilter, eth_newBlockFilter, eth_newPendingTransactionFilter) one key may hold on a network, on this ' +
            'instance; eth_uninstallFilter, 5 minutes unpolled, or the node\'s "filter not found" frees one. At it, the key\'s least ' +
            'recently used filter not polled for a minute is uninstalled to make room; when all are polled, the new one gets -32036.',
        }),
        maxFiltersPerAccount: PositiveInteger({
          default: 1000,
          description:
            "Live filters all keys of an account (the live keys of a regeneration) may hold on a network, on this instance; at it, the account's " +
            'least recently used filter not polled for a minute makes room, else -32036.',
        }),
        bodyTimeoutMs: Type.Integer({
          minimum: 100,
          maximum: 8000,
          default: 5000,
          description:
            'How long the whole request body may take to arrive after the headers; then 408 and the connection is closed. At most 8000: ' +
            'uWebSockets.js itself drops a connection whose body stalls (under 16 KB/s) after 8 to 12 s, without an answer.',
        }),
        queueMs: Type.Integer({
          minimum: 0,
          maximum: 10000,
          default: 250,
          description: "How long a call over a key's rate may wait for its token before it is rejected with 429 (0: no queue).",
        }),
        ipThrottle: Section(
          {
            rejections: PositiveInteger({ default: 2000, description: 'Rejected calls within windowMs that throttle the IP.' }),
            windowMs: PositiveInteger({ default: 10000, description: 'The window in which rejected calls are counted.' }),
            durationMs: PositiveInteger({ default: 60000, description: 'How long the IP stays throttled.' }),
          },
          'A client IP whose calls keep being rejected (by rate limits, or before reaching a node: bad keys, unknown networks, bad JSON, too large) is throttled for every key.',
        ),
      }),
      ws: Section(
        {
          ...wsKeyLimitsSchema.properties,
          maxMessageBytes: PositiveInteger({
            default: 1048576,
            description:
              'Largest message a client may send; a frame over it is refused at its header and the connection closed without a close frame (1006). It is also what one connection can make the gateway hold for an unfinished message.',
          }),
          notificationUnitsPerSecond: Type.Union([PositiveInteger(), Type.Null()], {
            default: 20000,
            description:
              'Compute units of subscription notifications (1 per 25 bytes of each copy delivered, duplicates each) each account may be sent ' +
              'per second on one instance, across its connections and keys; twice that may go at once. In a fleet each instance applies it: an ' +
              "account connected to N instances may be sent N times it (the plan's units per second, where set, hold for the fleet). Past it the " +
              'connection that would take the next one is closed (1008 "Notification budget"). null: no budget (the plan\'s units still apply).',
          }),
          maxBufferedBytes: PositiveInteger({
            default: 4194304,
            description: 'Bytes waiting for a slow client beyond which it is disconnected (1008) rather than silently losing messages.',
          }),
          idleTimeoutSec: Type.Union([Type.Literal(0), Type.Integer({ minimum: 8, maximum: 960 })], {
            default: 60,
            description: 'A connection that sends nothing (pongs to our pings included) for this long is closed; 0: never (uWS needs 0 or at least ' + '8).',
          }),
          maxSubscriptionsPerConnection: PositiveInteger({
            default: 100,
            description:
              'Subscriptions one connection may hold; the next eth_subscribe gets -32033. Each distinct logs filter is an upstream ' +
              'subscription of its own.',
          }),
          maxLogsFiltersPerKey: PositiveInteger({
            default: 100,
            description:
              'Distinct logs filters one key may hold on a network, over all its connections (each one the node matches against every ' +
              "block's logs); a subscription to a filter the key holds already does not count again. The next new one gets -32034.",
          }),
          maxLogsFiltersPerAccount: PositiveInteger({
            default: 200,
            description:
              'Distinct logs filters all keys of an account (the live keys of a regeneration) may hold on a network; the next new one gets ' +
              '-32034. An account holding more distinct filters than the network has free gets no new one either: a few accounts never ' +
              'take the last free filters of ws.maxLogsFiltersPerNetwork.',
          }),
          maxLogsFiltersPerNetwork: PositiveInteger({
            default: 5000,
            description:
              "Distinct logs filters subscribed on the nodes of a network, all keys together (a Private Node account's own nodes count " +
              'apart); a filter another client uses already is shared and does not count. The next new one gets -32034.',
          }),
        },
        'WebSocket endpoint (/ws/<network>): the limits per API key of the spec, and per connection.',
      ),
      routing: Section({
        fullNodeWindowBlocks: PositiveInteger({
          default: 128,
          description: 'Blocks of state full nodes keep; calls for older state go to archive nodes.',
        }),
      }),
      methodCosts: MapOf('^[a-z0-9]+_[A-Za-z][A-Za-z0-9_]*$', Type.Integer({ minimum: 0, maximum: 1000000 }), {
        default: {},
        description:
          'Compute units per method, overriding the method table\'s (docs/costs.md), e.g. {"eth_call": 30}: what UsageRecorded.units counts and ' +
          "what a plan's units per second limit. Only methods the gateway serves; one not in the table costs 100 (trace_: 500) unless set here.",
      }),
      heavy: Section(
        {
          timeoutMs: PositiveInteger({
            default: 60000,
            description: 'Time-out of a heavy call, which is also its whole budget: one that timed out is not tried on another node.',
          }),
          methodTimeoutMs: MapOf('^[a-z0-9]+_[A-Za-z0-9]+$', PositiveInteger(), {
            description: 'Time-outs of single methods, overriding timeoutMs (e.g. {"debug_traceBlockByNumber": 120000}).',
            default: {},
          }),
          getLogs: Section({
            chunkBlocks: PositiveInteger({
              default: 2000,
              description: 'A wider eth_getLogs range is split into chunks of this many blocks.',
            }),
            maxRangeBlocks: PositiveInteger({
              default: 100000,
              description: 'Widest eth_getLogs range served (wider: an error naming a range that works).',
            }),
            maxLogs: PositiveInteger({
              default: 100000,
              description: 'Most logs one eth_getLogs call returns (more: an error naming a range that works).',
            }),
            concurrency: PositiveInteger({ default: 4, description: 'Chunks of one call fetched at once.' }),
          }),
          atOnce: PositiveInteger({
            default: 8,
            description:
              "Heavy calls a key may have being sent to the nodes at once, on this instance (a plan's heavyCallsAtOnce overrides it); " +
              'calls served from the cache or joining an identical call in flight do not count.',
          }),
          atOnceWaitMs: Type.Integer({
            minimum: 0,
            maximum: 10000,
            default: 1000,
            description: 'How long a heavy call over atOnce waits for one of them to finish before it gets 429 with Retry-After.',
          }),
        },
        'Heavy calls (eth_getLogs, eth_getBlockReceipts, debug_trace*, trace_*): their time-out, eth_getLogs splitting, how many a key may run at once.',
      ),
      evm: Section(
        {
          gasCap: PositiveInteger({
            default: 50000000,
            description:
              "Most gas the gateway's EVM runs a verified eth_call or eth_estimateGas with (networks.<slug>.verify: calls), as geth's RPCGasCap: " +
              "a run gets the least of the call's gas (or the block's gas limit), the block's gas limit and this.",
          }),
          timeoutMs: PositiveInteger({
            default: 5000,
            description:
              "Wall-clock budget of one run of the gateway's EVM, as geth's RPCEVMTimeout: a run still going after it is stopped (its worker thread " +
              'ended and replaced) and the client gets VERIFY_RUN_TIMEOUT. A reload applies it to the runs that start after it, as gasCap.',
          }),
          workers: PositiveInteger({
            default: 2,
            description:
              "Worker threads the gateway's EVM runs in, off the event loop; a run waits for a free one. Started once: a reload that changes it is refused (restart).",
          }),
        },
        "The gateway's own EVM runs of verified eth_call and eth_estimateGas (networks.<slug>.verify: calls): their gas, time and threads (docs/verified-answers.md).",
      ),
      cache: Section(
        {
          enabled: Type.Boolean({ default: true, description: 'false: every call goes to a node.' }),
          path: Type.Optional(
            Type.String({
              minLength: 1,
              description: 'LMDB folder of the cache (default dataDir/cache); gateways on one host that name the same folder share it.',
            }),
          ),
          maxBytes: PositiveInteger({ default: 1073741824, description: 'Stored answer bytes above which the oldest are evicted.' }),
          finalityDepth: PositiveInteger({
            default: 64,
            description:
              "Blocks below the head a block must be to be cached as final, whatever the nodes' `finalized` tag says (dev chains call their head finalized); head minus this is the finalized block on networks whose nodes do not know the tag.",
          }),
          finalityPollMs: PositiveInteger({
            default: 2000,
            description: 'How often the finalized block is read (and checked for a reorg).',
          }),
        },
        'Answers that can no longer change, in LMDB under dataDir/cache, shared by the gateway processes of the host.',
      ),
      health: Section(
        {
          pollMs: PositiveInteger({
            default: 2000,
            description: 'How often every node is asked for its head (its lag, and the probe of a node that is out).',
          }),
          maxLagBlocks: PositiveInteger({
            default: 10,
            description: 'Blocks behind the best node of the network that take a node out; back within half of it.',
          }),
          failureThreshold: PositiveInteger({ default: 3, description: 'Consecutive transport failures that take a node out.' }),
          maxErrorRate: Type.Number({
            minimum: 0.01,
            maximum: 1,
            default: 0.5,
            description: 'Share of failed calls among its last 40 that takes a node out.',
          }),
          cooldownMs: PositiveInteger({ default: 5000, description: 'How long a failing node stays out before a probe.' }),
          methodSetAsideMs: PositiveInteger({
            default: 300000,
            description:
              'How long a method a node answered "method not found" for is set aside on that node (its calls go to the other nodes of ' +
              'the kind), before one call probes it again.',
          }),
        },
        'When a node is taken out of its pool, and how it comes back.',
      ),
      hedge: Section(
        {
          enabled: Type.Boolean({ default: false, description: 'Hedge reads (off by default: it adds upstream load).' }),
          minDelayMs: PositiveInteger({ default: 50, description: 'Never hedge sooner than this.' }),
          maxDelayMs: PositiveInteger({ default: 2000, description: 'Hedge no later than this, whatever the p95.' }),
        },
        "Hedged reads: a read slower than the best node's p95 latency is also asked of another node; the first answer wins.",
      ),
      diagnostics: Section(
        {
          responseHeaders: Type.Boolean({
            default: false,
            description:
              "Add to each single HTTP call the headers X-Tollgate-Node (the node that answered, or cache), X-Tollgate-Attempts (nodes asked), X-Tollgate-Consensus (agreeing/participants) and X-Tollgate-Verified (the header a state read was proven against). Off by default: node names are the operator's.",
          }),
        },
        'What the gateway tells a client about how its call was served, for debugging a deployment.',
      ),
      shutdownMs: PositiveInteger({
        default: 10_000,
        description:
          'Longest graceful stop (SIGTERM/SIGINT): calls in flight are answered, then the usage and the outbox are flushed and the ' +
          'stores closed; past this the process exits anyway.',
      }),
      workers: Type.Union([Type.Integer({ minimum: 1, maximum: 256 }), Type.Literal('auto')], {
        default: 1,
        description:
          'Gateway processes on this machine, on the one port (Linux spreads the connections): "auto" is one per core. They are ' +
          "instances of one fleet: they share each key's limits (over NATS when events.nats is set, else through `tollgate start`, " +
          'which supervises them). Worker i has its admin listener on admin.listen.port + i.',
      }),
      fleet: Section(
        {
          syncMs: PositiveInteger({
            default: 50,
            description: 'How often an instance sends what it admitted to the others: a key may exceed its plan by what the others admitted in ' + 'this time.',
          }),
          coldReportMs: PositiveInteger({
            default: 250,
            description:
              'How often an instance reports what it admitted of accounts far under their limits (cold) to their owners, rounded to ' +
              'whole syncMs: messages between instances fall with it, and a key spread over n instances may take up to n − 1 bursts ' +
              'and this much more of refill on each before it is shared as hot (docs/fleet.md, "The overshoot bound").',
          }),
          maxReportsPerSecond: PositiveInteger({
            default: 100,
            description:
              'At most this many cold reports a second into each instance from the others: with N instances, cold reports go every ' +
              'max(coldReportMs, (N − 1)/maxReportsPerSecond seconds), so what an instance receives stops growing with the fleet, ' +
              'and the overshoot bound uses that longer interval (docs/fleet.md, "The overshoot bound").',
          }),
          heartbeatMs: PositiveInteger({
            default: 1000,
            description: 'How often an instance announces itself (stretched in a large fleet: maxHeartbeatsPerSecond).',
          }),
          silentMs: PositiveInteger({
            default: 3000,
            description:
              'An instance not heard for this long is dropped: its connections stop counting. Stretched as its heartbeat is in a ' +
              'large fleet (maxHeartbeatsPerSecond).',
          }),
          maxHeartbeatsPerSecond: PositiveInteger({
            default: 100,
            description:
              'At most this many heartbeats a second into each instance: with N instances, each announces itself every ' +
              'max(heartbeatMs, N/maxHeartbeatsPerSecond seconds), and silentMs stretches by as much, so a dead instance is ' +
              'noticed that much later (docs/fleet.md, "Membership").',
          }),
        },
        "Instances that share one event stream (events.nats and events.stream) are one fleet: they share each key's limits over " +
          'NATS. Without NATS, an instance is a fleet of one.',
      ),
      keys: Section(
        {
          jwt: Section(
            {
              audience: Type.String({
                minLength: 1,
                default: 'tollgate',
                description:
                  "The `aud` a signed token must name: tokens issued for another service are refused. Set it to the gateway's public URL " +
                  'when several gateways share signing keys but must not share tokens.',
              }),
              clockSkewSeconds: Type.Integer({
                minimum: 0,
                maximum: 300,
                default: 30,
                description: "Tolerance on a token's `exp` and `nbf` for the clocks of the token issuer and the gateway that differ.",
              }),
            },
            'Signed tokens (JWT) accounts send instead of, or beside, an API key (docs/keys.md).',
          ),
        },
        'API keys and the tokens that stand for them.',
      ),
      trustProxy: Type.Boolean({
        default: false,
        description:
          'Take the client IP from the last X-Forwarded-For entry (behind nginx terminating TLS); off: the socket address, because a ' +
          'client could forge the header.',
      }),
      usage: Section({
        intervalMs: Type.Integer({
          minimum: 100,
          default: 1000,
          description: 'Usage, rate-limit and WebSocket-refusal events are aggregated over this interval.',
        }),
        project: Type.Boolean({
          default: true,
          description:
            "Whether this instance projects the fleet's usage into its own store (the dashboard's usage and `tollgate usage` read it; the request path does not). " +
            'false: its projector skips usage events (and does not read usage partitions) and its dashboard asks an instance that projects usage, over NATS; needs events.nats. ' +
            'A store built with false is rebuilt by `tollgate replay` before it projects usage again (docs/fleet.md, "Where usage is projected").',
        }),
      }),
      payments: Type.Optional(
        Strict(
          {
            network: Type.String({ minLength: 1, description: 'Network slug (one of networks) the token lives on.' }),
            token: Type.String({
              pattern: ADDRESS,
              description: 'ERC-20 contract address of the USD stablecoin (its decimals are read from it).',
            }),
            treasury: Type.String({ pattern: ADDRESS, description: 'Address that receives payments.' }),
            confirmations: Type.Integer({
              minimum: 1,
              default: 12,
              description: "Blocks, the transfer's included, before a payment counts (a reorg shallower than this cannot undo it).",
            }),
            invoiceTtlMs: Type.Integer({
              minimum: 60000,
              default: 1800000,
              description:
                "How long an invoice's terms (amount, token, treasury) hold: a transfer mined in a later block does not pay it; it is " +
                'recorded (PaymentUnmatched) and can pay a fresh invoice.',
            }),
          },
          { description: 'On-chain payment of paid plans in a USD stablecoin (ERC-20); absent: paid plans are unavailable.' },
        ),
      ),
      dashboard: Section({
        sessionTtlMs: Type.Integer({
          minimum: 60000,
          default: 86400000,
          description: "How long a dashboard sign-in lasts (the session cookie's expiry).",
        }),
        signatureChecks: Section(
          {
            gas: Type.Integer({ minimum: 21000, default: 1000000, description: 'Gas cap of the eth_call (its `gas` field).' }),
            timeoutMs: PositiveInteger({ default: 5000, description: 'How long a check may take on our nodes, failovers included.' }),
          },
          "A contract wallet's sign-in signature (ERC-1271, ERC-6492) is an eth_call on our own node: its bounds.",
        ),
        limits: Section(
          {
            maxTracked: PositiveInteger({
              default: 20000,
              description: 'Most clients each limit remembers at once; past it the least recently seen is forgotten (its limit starts afresh).',
            }),
            api: IpLimit([120, 250], 'Every call to /api/.'),
            signIn: IpAndAccountLimit(
              [10, 6000],
              [10, 60000],
              "Sign-in attempts (POST /api/siwe/verify); per account: the attempts naming one wallet, from any IP, whose signature is not the wallet's own key's (checked locally, free): those ask our node.",
            ),
            contractChecks: IpLimit([5, 60000], 'Contract-wallet signature checks, each an eth_call on our node.'),
            newAccounts: Section(
              { perIp: Bucket(5, 720000), global: Bucket(100, 36000) },
              'Sign-ins that create an account (a new wallet, which may then take the Free Trial once): per IP, and for all clients ' +
                'together (`global`), which the instances of a fleet split between them (each applies 1/N of it).',
            ),
            keys: IpAndAccountLimit([20, 180000], [10, 360000], 'Key regenerations and allowlist changes.'),
            invoices: IpAndAccountLimit([20, 180000], [10, 360000], 'Plan choices (an invoice, a free plan, a private node request).'),
            paymentChecks: IpAndAccountLimit([60, 1000], [30, 2000], 'Payment checks (POST /api/invoices/<id>/payment), each a few calls to our node.'),
          },
          'Rate limits of the dashboard API (/api/), per client IP (see trustProxy) and per signed-in account: `burst` calls at once, ' +
            'then one more every `everyMs`. Past them: 429 RATE_LIMITED with Retry-After.',
        ),
      }),
    },
    {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'urn:tollgate:config',
      title: 'Tollgate configuration',
    },
  ),
)
