import type { Static } from '@sinclair/typebox'
import type { configSchema } from '../../schemas/config.js'

/**
 * The gateway's configuration: the type of schemas/config.ts (where each field is described),
 * after defaults are filled in and the file is checked. Frozen once loaded.
 */
export type Config = Static<typeof configSchema>

export type EventsConfig = Config['events']
export type NetworkConfig = Config['networks'][string]
export type UpstreamConfig = NetworkConfig['upstreams'][number]
export type LimitsConfig = Config['limits']
export type IpThrottleConfig = LimitsConfig['ipThrottle']
export type WsConfig = Config['ws']
export type RoutingConfig = Config['routing']
export type HeavyConfig = Config['heavy']
export type EvmConfig = Config['evm']
export type CacheConfig = Config['cache']
export type HealthConfig = Config['health']
export type HedgeConfig = Config['hedge']
export type FleetConfig = Config['fleet']
export type PaymentsConfig = NonNullable<Config['payments']>
export type DashboardConfig = Config['dashboard']
export type DashboardLimitsConfig = DashboardConfig['limits']
/** `burst` calls at once, then one more every `everyMs`. */
export type BucketLimitConfig = DashboardLimitsConfig['api']['perIp']
