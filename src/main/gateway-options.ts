import type { Logger } from 'pino'
import type { Clock } from '../../actors/runtime/clock.js'
import type { FleetChannel } from '../fleet/fleet-bus.js'

/** What startGateway is given besides the config: the process's own facts, never config fields. */
export interface GatewayOptions {
  logger: Logger
  clock?: Clock
  /** Identifies this process in usage events; default host, pid and start time. */
  instance?: string
  /** TOLLGATE_SECRET (default: the environment's); without it the dashboard API is disabled. */
  secret?: string
  /** Folder of the built dashboard (default: dist/dashboard of this package, when built). */
  dashboardDir?: string
  /**
   * Internal, for the benchmark's "what metering costs" ratio (bench/README.md): false serves
   * calls without counting usage or rate-limit decisions. Never a config field: a gateway that
   * does not meter cannot bill.
   */
  meterUsage?: boolean
  /**
   * This process is worker `index` of a `tollgate start` with `workers` > 1 (src/workers/): its
   * projections and outbox are its own, in `<dataDir>/workers/<index>`; the event log and the cache
   * are shared. `channel` reaches the other workers when there is no NATS.
   */
  worker?: { index: number; channel?: FleetChannel }
}
