import type { Config } from '../config/types.js'
import type { PlanCatalog } from '../plans/catalog.js'
import type { UpstreamsChange } from '../upstream/upstreams.js'

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

/**
 * The report of an applied reload (its log line, and `tollgate reload`'s answer): the networks
 * and nodes that came, went or changed (as the nodes' reconfigure told them), the plans, and the
 * paths changed in limits, health, hedging and the other settings of the networks kept. A section
 * that did not change is left out, so that an empty report says the reload changed nothing.
 * @example
 * reloadReport({ config: running, catalog }, { config: { ...running, limits: { ...running.limits, queueMs: 0 } }, catalog }, noNodes)
 * // { limits: ['limits.queueMs'] }
 */
export function reloadReport(
  before: { config: Config; catalog: PlanCatalog },
  after: { config: Config; catalog: PlanCatalog },
  nodes: Pick<UpstreamsChange, 'networksAdded' | 'networksRemoved' | 'nodes'>,
): Record<string, unknown> {
  const running = before.config
  const next = after.config
  const plans = catalogChanges(before.catalog, after.catalog)
  const changes: Record<string, unknown> = {}
  if (nodes.networksAdded.length > 0) changes.networksAdded = nodes.networksAdded
  if (nodes.networksRemoved.length > 0) changes.networksRemoved = nodes.networksRemoved
  if (nodes.nodes.length > 0) changes.nodes = nodes.nodes
  if (plans.added.length + plans.removed.length + plans.changed.length > 0 || plans.catalog !== undefined) changes.plans = plans
  for (const section of ['limits', 'health', 'hedge'] as const) {
    const paths = changedPaths(running[section], next[section], section)
    if (paths.length > 0) changes[section] = paths
  }
  // Other network settings (finalityDepth, broadcastTransactions, forwardMethods) than the nodes
  // and consensus (told by `nodes`), of the networks on both sides (a new or gone one is told whole).
  const networkPaths = changedPaths(running.networks, next.networks, 'networks').filter((p) => !/^networks\.[^.]+\.(upstreams|consensus)/.test(p))
  const common = networkPaths.filter((p) => Object.hasOwn(running.networks, p.split('.')[1]) && Object.hasOwn(next.networks, p.split('.')[1]))
  if (common.length > 0) changes.networks = common
  return changes
}

/** What a reload changed in the plan catalog: plans added, removed, changed (by id), and its name. */
function catalogChanges(running: PlanCatalog, next: PlanCatalog): { added: string[]; removed: string[]; changed: string[]; catalog?: string } {
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
