import type { NodeKind } from '../events/types.js'

/**
 * The gateway's configuration, after defaults are applied and the file is checked against
 * schemas/config.schema.json. Frozen once loaded.
 */
export interface Config {
  listen: { host: string; port: number }
  /** The admin listener (/metrics, /healthz, /readyz); a non-loopback host needs TOLLGATE_ADMIN_TOKEN. */
  admin: { listen: { host: string; port: number } }
  /** Base URL clients use (behind TLS termination: https://rpc.example.com); default from listen. */
  publicUrl?: string
  dataDir: string
  events: EventsConfig
  networks: Record<string, NetworkConfig>
  plans: { catalog: string }
  limits: LimitsConfig
  ws: WsConfig
  usage: { intervalMs: number }
  routing: RoutingConfig
  heavy: HeavyConfig
  cache: CacheConfig
  health: HealthConfig
  hedge: HedgeConfig
  /**
   * Behind a reverse proxy (nginx terminating TLS): take the client IP from the last entry of
   * X-Forwarded-For instead of the socket's address. Off by default: a client could forge it.
   */
  trustProxy: boolean
  /** Longest graceful stop, in ms: past it the process exits even if a client holds a call open. */
  shutdownMs: number
  /** Sharing each key's limits with the other instances of the stream (schemas/config.ts). */
  fleet: FleetConfig
  /** Gateway processes on this machine, on one port: a number, or "auto" (one per core). */
  workers: number | 'auto'
  /** On-chain payment of paid plans; absent: paid plans are unavailable. */
  payments?: PaymentsConfig
  dashboard: DashboardConfig
}

export interface RoutingConfig {
  /** Blocks of state full nodes keep: calls for older state go to archive nodes. */
  fullNodeWindowBlocks: number
}

export interface FleetConfig {
  syncMs: number
  heartbeatMs: number
  silentMs: number
}

export interface IpThrottleConfig {
  /** Rejected calls from one IP within `windowMs` that throttle it. */
  rejections: number
  windowMs: number
  /** How long the IP stays throttled. */
  durationMs: number
}

/** The WebSocket endpoint's limits (schemas/config.ts describes each). */
export interface WsConfig {
  maxConnectionsPerKey: number
  newConnectionsPerSecond: number
  cooldownMs: number
  messagesPerSecond: number
  tolerance: number
  badMessages: number
  badMessagesWindowMs: number
  penaltyMs: number
  maxMessageBytes: number
  maxBufferedBytes: number
  idleTimeoutSec: number
  maxSubscriptionsPerConnection: number
}

export interface PaymentsConfig {
  /** Network slug (a key of networks) the token lives on. */
  network: string
  /** ERC-20 contract address of the USD stablecoin. */
  token: string
  /** Address that receives payments. */
  treasury: string
  /** Blocks, the transfer's included, before a payment counts. */
  confirmations: number
  /** How long an invoice's terms hold, in ms: a transfer mined later does not pay it. */
  invoiceTtlMs: number
}

export interface DashboardConfig {
  /** How long a dashboard sign-in lasts, in ms. */
  sessionTtlMs: number
  /** Bounds of a contract wallet's signature check (an eth_call on our node). */
  signatureChecks: { gas: number; timeoutMs: number }
  limits: DashboardLimitsConfig
}

/** `burst` calls at once, then one more every `everyMs`. */
export interface BucketLimitConfig {
  burst: number
  everyMs: number
}

/** Rate limits of the dashboard API, per client IP and per signed-in account. */
export interface DashboardLimitsConfig {
  /** Most clients each limit remembers at once. */
  maxTracked: number
  api: { perIp: BucketLimitConfig }
  signIn: { perIp: BucketLimitConfig }
  contractChecks: { perIp: BucketLimitConfig }
  newAccounts: { perIp: BucketLimitConfig }
  keys: { perIp: BucketLimitConfig; perAccount: BucketLimitConfig }
  invoices: { perIp: BucketLimitConfig; perAccount: BucketLimitConfig }
  paymentChecks: { perIp: BucketLimitConfig; perAccount: BucketLimitConfig }
}

export interface EventsConfig {
  /** NATS server URL(s); absent: the embedded log in dataDir. */
  nats?: string | string[]
  /** JetStream stream name. */
  stream: string
  /** Subject prefix, events go to `<prefix>.<category>.<type>`. */
  subjectPrefix: string
  /** JetStream stream replicas (1 on a single server, 3 in a production cluster). */
  replicas: number
}

export interface NetworkConfig {
  chainId: number
  upstreams: UpstreamConfig[]
  /** Blocks below the head taken as final when the nodes have no `finalized` tag (default cache.finalityDepth). */
  finalityDepth?: number
}

export interface HeavyConfig {
  /** Time-out of a heavy call (method table `heavy`), which is also its whole budget. */
  timeoutMs: number
  /** Per-method time-outs overriding timeoutMs. */
  methodTimeoutMs: Record<string, number>
  getLogs: { chunkBlocks: number; maxRangeBlocks: number; maxLogs: number; concurrency: number }
}

export interface CacheConfig {
  enabled: boolean
  /** LMDB folder (default dataDir/cache); gateways on one host naming the same folder share it. */
  path?: string
  /** Stored answer bytes above which the oldest are evicted. */
  maxBytes: number
  /** Blocks below the head taken as final where nodes do not know the `finalized` tag. */
  finalityDepth: number
  finalityPollMs: number
}

export interface HealthConfig {
  /** How often every node is asked for its head. */
  pollMs: number
  /** Blocks behind the best node that take a node out. */
  maxLagBlocks: number
  failureThreshold: number
  maxErrorRate: number
  cooldownMs: number
}

export interface HedgeConfig {
  enabled: boolean
  minDelayMs: number
  maxDelayMs: number
}

export interface UpstreamConfig {
  /** HTTP JSON-RPC URL of the node. */
  url: string
  /** WebSocket URL of the node, when it offers one: calls are multiplexed over it. */
  ws?: string
  kind: NodeKind
  /** Name for logs and metrics; default: host:port of url. */
  name?: string
}

export interface LimitsConfig {
  /** Largest request body accepted, in bytes (413 beyond). */
  maxBodyBytes: number
  /** Most calls in one batch (413 beyond). */
  maxBatch: number
  /** Time-out of one upstream call, in ms: of the node's whole answer, not only its first byte. */
  upstreamTimeoutMs: number
  /** Largest answer read from a node for one call or batch, in bytes (502 -32023 beyond). */
  maxUpstreamBytes: number
  /** Concurrent calls of one batch sent upstream at once. */
  batchConcurrency: number
  /** How long the whole request body may take after the headers, in ms (408 beyond; the connection is closed). */
  bodyTimeoutMs: number
  /** How long a call over a key's rate may wait for its token before it is rejected (0: no queue). */
  queueMs: number
  ipThrottle: IpThrottleConfig
}
