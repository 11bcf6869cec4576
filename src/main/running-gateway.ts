import type { Config } from '../config/types.js'
import type { EventLog } from '../events/log.js'
import type { Outbox } from '../events/outbox.js'
import type { StateStore } from '../store/state-store.js'
import type { Projector } from '../projections/projector.js'
import type { Upstreams } from '../upstream/upstreams.js'
import type { UsageMeter } from '../usage/usage-meter.js'
import type { UpstreamCaller } from '../gateway/upstream-caller.js'
import type { ImmutableCache } from '../cache/immutable-cache.js'
import type { FinalityTracker } from '../cache/finality.js'
import type { ReloadOutcome } from './reload.js'

/** A started gateway (startGateway's answer): where it listens, its parts for tests and tools, reload and close. */
export interface RunningGateway {
  /** Base URL of the HTTP endpoints, e.g. http://127.0.0.1:8080 */
  readonly http: string
  /** Base URL of the WebSocket endpoints, e.g. ws://127.0.0.1:8080 */
  readonly ws: string
  readonly port: number
  /** Base URL of the admin listener (/metrics, /healthz, /readyz), e.g. http://127.0.0.1:9090 */
  readonly admin: string
  readonly log: EventLog
  readonly store: StateStore
  readonly outbox: Outbox
  readonly usage: UsageMeter
  readonly projector: Projector
  /** The upstream pools (node counters and health, for tests and tools). */
  readonly upstreams: Upstreams
  /** Cache, in-flight sharing, getLogs splitting (counters, for tests and tools). */
  readonly caller: UpstreamCaller
  /**
   * Apply a new config to the running gateway (SIGHUP, `tollgate reload`): the nodes, the plan
   * catalog, the limits, health and hedging change for the calls that come from now on; nothing
   * is closed under a client. Refused whole when a field that needs a restart changed, or the
   * plan catalog cannot be read; the running config then stays. See src/main/reload.ts.
   */
  reload(next: Config): ReloadOutcome
  /** The immutable-answer cache, when enabled. */
  readonly cache?: ImmutableCache
  readonly finality?: FinalityTracker
  close(): Promise<void>
}
