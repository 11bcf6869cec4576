/**
 * The decider of one client IP: counts the calls of that IP that rate limits rejected, over a
 * sliding window, and throttles the IP for every key once they cross a threshold (the spec:
 * "consistently exceeding the limit can lead to temporary throttling of the client's IP
 * address"). Pure functions of (state, command, time); the host emits IpThrottled.
 */
export interface IpThrottleLimits {
  /** Rejected calls within `windowMs` that throttle the IP. */
  rejections: number
  windowMs: number
  /** How long the throttle lasts. */
  durationMs: number
}

/** The window is kept as SLOTS counters: memory per IP stays constant whatever the traffic. */
const SLOTS = 10

export interface IpState {
  /** Rejections per slot, `slotMs = windowMs / SLOTS`, indexed by slot number modulo SLOTS. */
  counts: number[]
  /** The slot number each counter belongs to (a counter of an older slot is stale). */
  slots: number[]
  /** Throttled until this time (0: not throttled). */
  throttledUntil: number
}

export type IpDecision = { type: 'None' } | { type: 'Throttled'; until: number; rejections: number }

export function initialIpState(): IpState {
  return { counts: new Array(SLOTS).fill(0), slots: new Array(SLOTS).fill(-1), throttledUntil: 0 }
}

/** Count `calls` rejected calls at `now`; throttle when the window holds `limits.rejections`. */
export function recordRejected(state: IpState, calls: number, now: number, limits: IpThrottleLimits): { state: IpState; decision: IpDecision } {
  const slotMs = Math.max(1, Math.floor(limits.windowMs / SLOTS))
  const slot = Math.floor(now / slotMs)
  const i = slot % SLOTS
  const counts = state.counts.slice()
  const slots = state.slots.slice()
  if (slots[i] !== slot) {
    slots[i] = slot
    counts[i] = 0
  }
  counts[i] += calls
  let inWindow = 0
  for (let j = 0; j < SLOTS; j++) if (slot - slots[j] < SLOTS) inWindow += counts[j]
  if (state.throttledUntil > now || inWindow < limits.rejections) {
    return { state: { counts, slots, throttledUntil: state.throttledUntil }, decision: { type: 'None' } }
  }
  const until = now + limits.durationMs
  // The count starts again after a throttle: the next one needs a full window of new rejections.
  return {
    state: { counts: new Array(SLOTS).fill(0), slots: new Array(SLOTS).fill(-1), throttledUntil: until },
    decision: { type: 'Throttled', until, rejections: inWindow },
  }
}

/** ms until the throttle lifts (0: not throttled). */
export function throttledFor(state: IpState, now: number): number {
  return state.throttledUntil > now ? state.throttledUntil - now : 0
}

/** Nothing to remember: no rejections in the window and no throttle (the host may forget it). */
export function isIdle(state: IpState, now: number, limits: IpThrottleLimits): boolean {
  if (state.throttledUntil > now) return false
  const slot = Math.floor(now / Math.max(1, Math.floor(limits.windowMs / SLOTS)))
  return state.slots.every((s, j) => slot - s >= SLOTS || state.counts[j] === 0)
}
