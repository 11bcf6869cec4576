/**
 * Compile-time checks, run by `npm run lint` (the type check), not by tap: the types derived from
 * the schemas are the ones the code was written against (each line fails the type check if its
 * two sides differ).
 */
import type {
  DedicatedNodeAttached,
  Entitlement,
  EventType,
  InvoiceCreated,
  NodeKind,
  PaymentConfirmed,
  PaymentUnmatched,
  PlanActivated,
  PlanEnded,
  TokenTransfer,
  TollgateEvent,
  WsLimitReason,
} from '../../src/events/types.js'
import type { Config, FleetConfig, UpstreamConfig, PaymentsConfig, WsConfig } from '../../src/config/types.js'
import type { Plan } from '../../src/plans/catalog.js'
type ConsensusConfig = {
  participants: number
  agreement: number
  methods?: string[]
  disputeWindowMs?: number
  disputeThreshold?: number
  sitOutMs?: number
}
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
const checks: [
  Equal<PlanEnded['startsAt'], number | undefined>,
  Equal<PlanActivated['endsAt'], number | null>,
  Equal<PlanEnded['version'], number>, // a log holds older versions too
  Equal<PlanEnded['type'], 'PlanEnded'>,
  Equal<DedicatedNodeAttached['ws'], string | null>,
  Equal<NodeKind, 'full' | 'archive'>,
  Equal<Entitlement['kind'], NodeKind>, // the schema's kinds are the core's
  Equal<WsLimitReason, 'ws-connections' | 'ws-cooldown' | 'ws-messages-throttled' | 'ws-messages-dropped' | 'ws-penalty'>,
  Equal<
    Extract<TollgateEvent, { type: 'SignedOut' }>,
    { type: 'SignedOut'; version: number; id: string; time: number; accountId: string; sessionHash: string }
  >,
  Equal<EventType, TollgateEvent['type']>,
  Equal<Config['publicUrl'], string | undefined>,
  Equal<Config['listen'], { host: string; port: number }>,
  Equal<UpstreamConfig['kind'], NodeKind>,
  Equal<UpstreamConfig['ws'], string | undefined>,
  Equal<PaymentsConfig['confirmations'], number>,
  Equal<
    Config['networks'],
    Record<
      string,
      {
        chainId: number
        upstreams: UpstreamConfig[]
        finalityDepth?: number
        broadcastTransactions?: boolean
        forwardMethods?: string[]
        verify?: 'off' | 'reads' | 'calls'
        verifyCheckpoint?: { number: number; hash: string }
        consensus?: ConsensusConfig
      }
    >
  >,
  Equal<WsConfig['idleTimeoutSec'], number>,
  Equal<Config['events']['nats'], string | string[] | undefined>,
  Equal<
    Plan['limits'],
    {
      fullRps: number | null
      archiveRps: number | null
      fullUnitsPerSecond?: number | null | undefined
      archiveUnitsPerSecond?: number | null | undefined
      heavyCallsAtOnce?: number | null | undefined
    }
  >,
  Equal<Plan['priceFrom'], boolean | undefined>,
  Equal<Config['heavy']['methodTimeoutMs'], Record<string, number>>,
  Equal<InvoiceCreated['expiresAt'], number | undefined>, // version 2
  Equal<PaymentConfirmed['minedAt'], number | undefined>, // version 2
  Equal<PaymentUnmatched['minedAt'], number>,
  Equal<PaymentUnmatched['reason'], 'invoice-expired'>,
  Equal<TokenTransfer, { network: string; txHash: string; logIndex: number; from: string; amount: string; blockNumber: number; blockHash: string }>,
  Equal<Pick<PaymentUnmatched, keyof TokenTransfer>, TokenTransfer>,
  Equal<Config['workers'], number | 'auto'>,
  Equal<
    FleetConfig,
    { syncMs: number; coldReportMs: number; maxReportsPerSecond: number; heartbeatMs: number; silentMs: number; maxHeartbeatsPerSecond: number }
  >,
  Equal<PaymentsConfig['invoiceTtlMs'], number>,
] = [
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
]
export { checks }
