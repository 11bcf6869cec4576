/**
 * How often an instance announces itself, given the fleet's size.
 *
 * Every instance hears every heartbeat, its own included: N per `fleet.heartbeatMs` into each
 * instance, 300 a second at 300 instances, each tens of µs of the receiver's CPU and growing with
 * the fleet as reports did before `fleet.maxReportsPerSecond` (cold-interval.ts). Stretching the
 * interval to N/H seconds once the fleet is large keeps what an instance receives at
 * H = `fleet.maxHeartbeatsPerSecond` a second whatever N is. What it costs: the silence after which
 * a member is dropped (`fleet.silentMs`) and the settling after a rejoin are stretched by the same
 * factor, so that a slower heartbeat is never taken for a silent member, and so a dead instance is
 * noticed that much later (3 s at the defaults up to 100 instances, 9 s at 300).
 */

/** fleet.maxHeartbeatsPerSecond's default: fleets of up to 100 keep heartbeats every second. */
export const MAX_HEARTBEATS_PER_SECOND = 100

export interface HeartbeatSettings {
  /** fleet.heartbeatMs: the interval a small fleet keeps. */
  heartbeatMs: number
  /** The live instances (N), this one included: each of them is heard once an interval, its own echo too. */
  instances: number
  /** fleet.maxHeartbeatsPerSecond (H): at most this many heartbeats a second into an instance (absent: the default). */
  maxHeartbeatsPerSecond?: number
}

/**
 * The interval, max(heartbeatMs, N/H s), in whole milliseconds (rounded up, so that N heartbeats
 * per interval never exceed H a second).
 * @example
 * heartbeatIntervalMs({ heartbeatMs: 1_000, instances: 100 }) // 1000: 100 a second
 * heartbeatIntervalMs({ heartbeatMs: 1_000, instances: 300 }) // 3000
 * heartbeatIntervalMs({ heartbeatMs: 1_000, instances: 300, maxHeartbeatsPerSecond: 200 }) // 1500
 */
export function heartbeatIntervalMs(s: HeartbeatSettings): number {
  const h = s.maxHeartbeatsPerSecond ?? MAX_HEARTBEATS_PER_SECOND
  return Math.max(s.heartbeatMs, Math.ceil((Math.max(1, s.instances) * 1_000) / h))
}

/**
 * How long a member that announces heartbeats every `everyMs` may stay unheard before it is
 * dropped: `silentMs` stretched by the factor its heartbeat is (everyMs / heartbeatMs, at least 1),
 * so that the margin a small fleet has (silentMs / heartbeatMs heartbeats, 3 at the defaults) is
 * kept at any size.
 * @example
 * silenceMs({ heartbeatMs: 1_000, silentMs: 3_000 }, 1_000) // 3000
 * silenceMs({ heartbeatMs: 1_000, silentMs: 3_000 }, 3_000) // 9000
 */
export function silenceMs(s: { heartbeatMs: number; silentMs: number }, everyMs: number): number {
  return Math.ceil(s.silentMs * Math.max(1, everyMs / s.heartbeatMs))
}
