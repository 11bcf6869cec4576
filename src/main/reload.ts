import type { Config } from '../config/types.js'
import type { PlanCatalog } from '../plans/catalog.js'
import type { UpstreamNode } from '../upstream/node.js'
import type { UpstreamsChange, UpstreamsOptions } from '../upstream/upstreams.js'
import { ReloadPartFailed } from './errors.js'

/**
 * What a reload did: what changed (for its log line), why it was refused (nothing applied), or the
 * part that failed part way (the parts before it applied).
 */
export type ReloadOutcome =
  | { applied: true; changes: Record<string, unknown> }
  | { applied: false; restart: string[] }
  | { applied: false; error: Error }
  | { applied: false; failed: ReloadPartFailed }

/**
 * What a reload (SIGHUP, `tollgate reload`) applies to a running gateway: the nodes, the plans, the
 * limits, node health, hedging, the EVM's bounds. Every other section is read once, at start, by a part that cannot
 * change it under open sockets (the listeners, the event log, the data folder, the workers) or
 * that is not made to (the front end's body limits, the WebSocket limits, the cache): a change
 * there is refused whole, with the fields named, so that an operator never believes a setting
 * holds that does not.
 */
const LIVE_SECTIONS: ReadonlySet<string> = new Set(['$schema', 'networks', 'plans', 'limits', 'health', 'hedge', 'evm'])

/**
 * Fields of the live sections that are read once at start all the same: the front end's body
 * size and time-out checks (set up once per listener), and the EVM's threads (started once; a
 * thread mid-run cannot be handed over). A change of them needs a restart like the listeners'.
 */
const READ_AT_START: { readonly [S in 'limits' | 'evm']: readonly (keyof Config[S])[] } = {
  limits: ['maxBodyBytes', 'bodyTimeoutMs'],
  evm: ['workers'],
}

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
  for (const section of ['limits', 'evm'] as const) {
    const a = running[section] as Record<string, unknown>
    const b = next[section] as Record<string, unknown>
    for (const key of READ_AT_START[section]) if (a[key] !== b[key]) out.push(`${section}.${key}`)
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
 * and nodes that came, went or changed (as the nodes' part told them), the plans, and the
 * paths changed in limits, health, hedging, the EVM and the other settings of the networks kept. A section
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
  for (const section of ['limits', 'health', 'hedge', 'evm'] as const) {
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

/** A reload on its way through the parts: the config and catalog applied, and what the nodes part changed. */
export interface ReloadStep {
  readonly config: Config
  readonly catalog: PlanCatalog
  /** Written by the `nodes` part, read by the parts after it (the nodes to move off, follow, retire). */
  nodes: UpstreamsChange
}

/** One part of a running gateway that a reload changes, by name. */
export interface ReloadPart<T = ReloadStep> {
  readonly name: string
  apply(next: T): void
}

/**
 * Apply the parts in their order. A part that throws stops the reload there: the error names it,
 * the parts applied before it and those left, so that an operator is never left to guess which
 * half of a config holds.
 * @throws ReloadPartFailed
 * @example
 * applyParts([{ name: 'a', apply: () => {} }, { name: 'b', apply: () => { throw new Error('no') } }], step)
 * // ReloadPartFailed { part: 'b', applied: ['a'], notApplied: [] }
 */
export function applyParts<T>(parts: readonly ReloadPart<T>[], next: T): void {
  for (let i = 0; i < parts.length; i++) {
    try {
      parts[i].apply(next)
    } catch (err) {
      throw new ReloadPartFailed(
        parts[i].name,
        parts.slice(0, i).map((p) => p.name),
        parts.slice(i + 1).map((p) => p.name),
        err,
      )
    }
  }
}

/** The gateway's reloadable parts as a reload sees them: each one `apply` taking named settings. */
export interface ReloadTargets {
  /** The networks' pools and nodes (Upstreams); `retire` closes the dropped nodes once their calls end. */
  upstreams: {
    apply(next: { networks: Config['networks']; options: UpstreamsOptions }): UpstreamsChange
    retire(nodes: readonly UpstreamNode[]): void
  }
  /** What the nodes are built with, from a config (the composition root's: health, sizes, hooks). */
  upstreamsOptions(config: Config): UpstreamsOptions
  subscriptions: { apply(next: { timeoutMs: number }): void }
  /** The Private Node accounts' pools (PoolSelector). */
  accountPools: { apply(next: { droppedShared: readonly UpstreamNode[] }): void }
  nodeHeads: { apply(next: { built: UpstreamsChange['built']; dropped: readonly UpstreamNode[]; intervalMs: number; timeoutMs: number }): void }
  /** The router's best head per network (HeadTracker). */
  heads: { forget(network: string): void }
  /** The network label values /metrics accepts (NetworkLabels): added to, never taken from. */
  networkLabels: { add(networks: Iterable<string>): void }
  transactions: { broadcastOn(networks: Iterable<string>): void }
  methodRules: { apply(next: { forwardMethods: Readonly<Record<string, readonly string[] | undefined>> }): void }
  /** The upstream caller: time-outs, hedging, the EVM's bounds. */
  caller: { apply(next: { timeoutMs: number; hedge: Config['hedge']; evm: { gasCap: number; timeoutMs: number } }): void }
  /**
   * The config in force, that the call path reads through getters at the point of use (the
   * dispatcher's maxBatch, the batch runner's batchConcurrency, the forwarder's filter caps, the
   * charge's queueMs) and the polls read each round.
   */
  inForce: { apply(next: { config: Config }): void }
  ips: { apply(next: { limits: Config['limits']['ipThrottle'] }): void }
  keys: { apply(next: { catalog: PlanCatalog }): void }
  dashboard?: { apply(next: { config: Config; catalog: PlanCatalog }): void }
}

/** The most a head poll waits for a node, whatever limits.upstreamTimeoutMs (a poll is one eth_blockNumber). */
const HEAD_POLL_TIMEOUT_MS = 5_000

/**
 * The parts of a reload, in the order that never leaves a call without a node: the new nodes are
 * made and the pools given them (`nodes`), the subscriptions move off the dropped nodes, the
 * account pools that borrowed one are made again, the head monitor follows the new nodes, and only
 * then are the dropped nodes retired (closed once their calls end); then what the next calls read:
 * labels, transactions, method rules, time-outs and EVM bounds, the limits, the IP throttle, the
 * plans, the dashboard.
 * @example
 * applyParts(reloadParts(targets), { config: next, catalog, nodes: NO_NODE_CHANGE })
 */
export function reloadParts(g: ReloadTargets): ReloadPart[] {
  const parts: ReloadPart[] = [
    {
      name: 'nodes',
      apply: (n) => {
        n.nodes = g.upstreams.apply({ networks: n.config.networks, options: g.upstreamsOptions(n.config) })
      },
    },
    { name: 'subscriptions', apply: (n) => g.subscriptions.apply({ timeoutMs: n.config.limits.upstreamTimeoutMs }) },
    { name: 'account pools', apply: (n) => g.accountPools.apply({ droppedShared: n.nodes.dropped }) },
    {
      name: 'node heads',
      apply: (n) =>
        g.nodeHeads.apply({
          built: n.nodes.built,
          dropped: n.nodes.dropped,
          intervalMs: n.config.health.pollMs,
          timeoutMs: Math.min(n.config.limits.upstreamTimeoutMs, HEAD_POLL_TIMEOUT_MS),
        }),
    },
    { name: 'retired nodes', apply: (n) => g.upstreams.retire(n.nodes.dropped) },
    {
      name: 'heads',
      apply: (n) => {
        for (const network of n.nodes.networksRemoved) g.heads.forget(network)
      },
    },
    { name: 'metric labels', apply: (n) => g.networkLabels.add(Object.keys(n.config.networks)) },
    { name: 'transactions', apply: (n) => g.transactions.broadcastOn(broadcastNetworks(n.config)) },
    { name: 'method rules', apply: (n) => g.methodRules.apply({ forwardMethods: forwardMethodsOf(n.config) }) },
    {
      name: 'caller',
      apply: (n) => g.caller.apply({ timeoutMs: n.config.limits.upstreamTimeoutMs, hedge: n.config.hedge, evm: n.config.evm }),
    },
    { name: 'limits', apply: (n) => g.inForce.apply({ config: n.config }) },
    { name: 'ip throttle', apply: (n) => g.ips.apply({ limits: n.config.limits.ipThrottle }) },
    { name: 'plans', apply: (n) => g.keys.apply({ catalog: n.catalog }) },
  ]
  const dashboard = g.dashboard
  if (dashboard !== undefined) parts.push({ name: 'dashboard', apply: (n) => dashboard.apply({ config: n.config, catalog: n.catalog }) })
  return parts
}

/** What the nodes part changed before it ran: nothing. */
export const NO_NODE_CHANGE: UpstreamsChange = Object.freeze({ networksAdded: [], networksRemoved: [], nodes: [], dropped: [], built: [] })

/** The networks whose transactions go to every healthy node (networks.<slug>.broadcastTransactions). */
export function broadcastNetworks(config: Config): string[] {
  return Object.keys(config.networks).filter((slug) => config.networks[slug].broadcastTransactions === true)
}

/** Each network's forwardMethods (networks.<slug>.forwardMethods), for the method rules. */
export function forwardMethodsOf(config: Config): Record<string, readonly string[] | undefined> {
  return Object.fromEntries(Object.entries(config.networks).map(([slug, n]) => [slug, n.forwardMethods]))
}
