import type { Config } from '../config/types.js'
import type { PlanCatalog } from '../plans/catalog.js'

/** What a reload did: what changed (for its log line), or why it was refused. */
export type ReloadOutcome = { applied: true; changes: Record<string, unknown> } | { applied: false; restart: string[] } | { applied: false; error: Error }

/**
 * What a reload (SIGHUP, `tollgate reload`) applies to a running gateway: the nodes, the plans, the
 * limits, node health, hedging. Every other section is read once, at start, by a part that cannot
 * change it under open sockets (the listeners, the event log, the data folder, the workers) or
 * that is not made to (the front end's body limits, the WebSocket limits, the cache): a change
 * there is refused whole, with the fields named, so that an operator never believes a setting
 * holds that does not.
 */
const LIVE_SECTIONS: ReadonlySet<string> = new Set(['$schema', 'networks', 'plans', 'limits', 'health', 'hedge'])

/**
 * Limits read by the front end when it starts (the body's size and time-out checks are set up
 * once per listener): a change of them needs a restart like the listeners'.
 */
const LIMITS_AT_START: ReadonlySet<string> = new Set(['maxBodyBytes', 'bodyTimeoutMs'])

/**
 * The fields whose change needs a restart, as dotted paths (`listen.port`, `events.nats`); empty
 * when the new config can be applied live.
 * @example
 * restartNeeded(running, { ...running, listen: { ...running.listen, port: 8081 } }) // ['listen.port']
 */
export function restartNeeded(running: Config, next: Config): string[] {
  const out: string[] = []
  const keys = new Set([...Object.keys(running), ...Object.keys(next)])
  for (const key of keys) {
    if (LIVE_SECTIONS.has(key)) continue
    out.push(...changedPaths((running as Record<string, unknown>)[key], (next as Record<string, unknown>)[key], key))
  }
  for (const key of LIMITS_AT_START) {
    const k = key as keyof Config['limits']
    if (running.limits[k] !== next.limits[k]) out.push(`limits.${key}`)
  }
  return out
}

/**
 * The leaves that differ between two JSON values, as dotted paths under `at`: an object compared
 * key by key, anything else (arrays included) as a whole.
 */
export function changedPaths(a: unknown, b: unknown, at: string): string[] {
  if (isObject(a) && isObject(b)) {
    const out: string[] = []
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) out.push(...changedPaths(a[key], b[key], `${at}.${key}`))
    return out
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [at]
}

/** What a reload changed in the plan catalog: plans added, removed, changed (by id), and its name. */
export function catalogChanges(running: PlanCatalog, next: PlanCatalog): { added: string[]; removed: string[]; changed: string[]; catalog?: string } {
  const before = new Map(running.plans.map((p) => [p.id, JSON.stringify(p)]))
  const after = new Map(next.plans.map((p) => [p.id, JSON.stringify(p)]))
  return {
    added: [...after.keys()].filter((id) => !before.has(id)),
    removed: [...before.keys()].filter((id) => !after.has(id)),
    changed: [...after].filter(([id, text]) => before.has(id) && before.get(id) !== text).map(([id]) => id),
    ...(running.name === next.name && running.source === next.source ? {} : { catalog: next.name }),
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
