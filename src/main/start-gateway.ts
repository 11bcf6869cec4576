import { mkdirSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import type { Config } from '../config/types.js'
import { systemClock } from '../../actors/runtime/clock.js'
import { EventLogUnavailable } from '../events/errors.js'
import { makeEvent } from '../events/make-event.js'
import type { EventInput } from '../events/types.js'
import { Projector } from '../projections/projector.js'
import { loadPlanCatalog } from '../plans/catalog.js'
import { Upstreams } from '../upstream/upstreams.js'
import { UsageMeter } from '../usage/usage-meter.js'
import { gatewayRegistry } from '../metrics/registry.js'
import { NetworkLabels } from '../metrics/labels.js'
import { UpstreamDurations } from '../metrics/upstream-durations.js'
import { KeyDirectory } from '../gateway/key-directory.js'
import type { UsageSink } from '../gateway/dispatch-context.js'
import { RpcDispatcher } from '../gateway/rpc-dispatcher.js'
import { callPolicies } from '../gateway/call-policies.js'
import { dashboardPages } from '../dashboard/api-routes.js'
import { HeavyCalls } from '../gateway/heavy-calls.js'
import { MethodRules } from '../rpc/method-policy.js'
import { HttpServer } from '../front/http-server.js'
import { HttpCounters } from '../front/http-counters.js'
import { AdminServer, adminToken } from '../front/admin-server.js'
import { IpDirectory } from '../gateway/ip-directory.js'
import { HeadTracker } from '../gateway/head-tracker.js'
import { FilterPins } from '../gateway/filter-pins.js'
import { Subscriptions } from '../ws/subscriptions.js'
import { WsCounters } from '../ws/ws-counters.js'
import { WsDecisions } from '../ws/ws-decisions.js'
import { WsServer } from '../ws/ws-server.js'
import { PoolSelector } from '../gateway/pool-selector.js'
import { Admission } from '../gateway/admission.js'
import { DashboardService } from '../dashboard/dashboard-service.js'
import { dashboardDir } from '../dashboard/static-files.js'
import { UpstreamCaller } from '../gateway/upstream-caller.js'
import { registerCallPathMetrics } from '../gateway/call-path-metrics.js'
import { registerStateMetrics } from '../gateway/state-metrics.js'
import { FaultLog } from '../gateway/fault-log.js'
import { Closers } from './closers.js'
import { lockDataDir } from './data-dir-lock.js'
import { openEventsAndState } from './events-and-state.js'
import { watchNodeHeads } from './node-watch.js'
import { openAnswerCache } from './answer-cache.js'
import { joinFleet } from '../fleet/join-fleet.js'
import { fleetSubjectRoot } from '../fleet/fleet-bus.js'
import { answerUsageAsks, UsageAsker } from '../usage/usage-answers.js'
import { registerFleetMetrics } from '../fleet/fleet-metrics.js'
import { ReloadPartFailed } from './errors.js'
import {
  applyParts,
  broadcastNetworks,
  forwardMethodsOf,
  NO_NODE_CHANGE,
  reloadParts,
  reloadReport,
  restartNeeded,
  type ReloadOutcome,
  type ReloadStep,
} from './reload.js'
import type { GatewayOptions } from './gateway-options.js'
import type { RunningGateway } from './running-gateway.js'
import type { PlanCatalog } from '../plans/catalog.js'
import type { UpstreamsOptions } from '../upstream/upstreams.js'

/**
 * Start the gateway: open the event log and the LMDB projections, catch up, then serve. The
 * request path reads key state from memory (refreshed by the projector) and hands usage to the
 * outbox without waiting: the event log is never on the path of a call.
 *
 * This is the composition root: the one place where the parts are made and wired, in the order
 * of the design (events and state, the actors, the nodes, the call path, the front end). Each part
 * is registered with `closers` as soon as it is open; a step that throws closes what came before
 * it, and `close()` drains the front end and then closes the parts, the last opened first.
 */
export async function startGateway(config: Config, opts: GatewayOptions): Promise<RunningGateway> {
  const closers = new Closers()
  const closeAll = () => closers.closeAll((name, err) => opts.logger.warn({ err: String(err) }, `closing ${name} failed`))
  try {
    return await compose(config, opts, closers, closeAll)
  } catch (err) {
    await closeAll()
    throw err
  }
}

async function compose(config: Config, opts: GatewayOptions, closers: Closers, closeAll: () => Promise<void>): Promise<RunningGateway> {
  const { logger } = opts
  const clock = opts.clock ?? systemClock
  const instance = opts.instance ?? `${hostname()}-${process.pid}-${Date.now().toString(36)}`
  // Before anything is opened: an admin listener reachable from the network needs its token.
  const token = adminToken(config.admin.listen.host)
  // The data folder is this process's (a worker's supervisor holds it for its workers).
  if (opts.worker === undefined) closers.add('data folder lock', await lockDataDir(config.dataDir, 'gateway', 'a gateway'), (l) => l.release())
  // A worker's own folder for what one process writes (projections, outbox); the rest is shared.
  const ownDir = opts.worker === undefined ? config.dataDir : join(config.dataDir, 'workers', String(opts.worker.index))
  mkdirSync(ownDir, { recursive: true })
  let catalog = loadPlanCatalog(config.plans.catalog)
  /** The config in force: the start's, then each reload's (read by the polls, and by the call path's getters of limits). */
  let live = config
  /** When the drain began plus shutdownMs: what is left of it goes to flushing the outbox. */
  let deadline = Number.POSITIVE_INFINITY

  // Events and state: the log, the projections it feeds, the outbox that feeds it. An outage of
  // NATS is logged once, whichever of them meets it, then its state every 30 s.
  const { store, log, outbox, outage } = await openEventsAndState(config, ownDir, logger, closers, () => deadline)

  // The actors: one per key (rates, connections) and one per client IP (throttle).
  const keys = new KeyDirectory(store, catalog, clock, {
    ws: config.ws,
    // The end of a plan period is a decision too: the first instance that sees it says so.
    onPlanEnded: (account, planId, startsAt, endedAt) =>
      outbox.publish([makeEvent({ type: 'PlanEnded', accountId: account.accountId, planId, reason: 'expired', startsAt }, endedAt)]),
  })
  const ips = new IpDirectory(store, clock, config.limits.ipThrottle, (ip, until, rejections) => {
    logger.warn({ ip, until: new Date(until).toISOString(), rejections }, 'client IP throttled')
    outbox.publish([
      makeEvent(
        { type: 'IpThrottled', ip, until, reason: 'rate-limit-rejections', rejections, windowMs: live.limits.ipThrottle.windowMs, instance },
        clock.now(),
      ),
    ])
  })
  // The fleet: the other instances of the same event stream share each key's limits over NATS.
  const channel = opts.worker?.channel
  const fleet =
    config.events.nats === undefined && channel === undefined
      ? undefined
      : closers.add('fleet bus', joinFleet({ config, keys, instance, clock, logger, channel }), (f) => f.bus.close())
  // Usage views over the fleet: an instance that projects usage answers the asks of those that do
  // not (usage.project false needs events.nats, so those always have a fleet).
  if (fleet && config.usage.project) answerUsageAsks(fleet.bus, fleetSubjectRoot(config), store, (err) => logger.error({ err }, 'answering a usage ask failed'))
  const usageAsker =
    fleet && !config.usage.project
      ? closers.add('usage asks', new UsageAsker({ bus: fleet.bus, subjectRoot: fleetSubjectRoot(config), instance }), (a) => a.close())
      : undefined
  const filters = new FilterPins(clock)
  const sweeper = setInterval(() => {
    keys.sweep()
    ips.sweep()
    filters.sweep()
  }, 60_000)
  sweeper.unref()
  closers.defer('sweeper', () => clearInterval(sweeper))

  // The nodes: pools per network (and per Private Node account), their heads, the cache.
  const faults = new FaultLog(logger, { clock })
  const registry = gatewayRegistry()
  const durations = new UpstreamDurations(registry)
  /** What the nodes are built with, from a config (at start and at each reload). */
  const upstreamsOptions = (c: Config): UpstreamsOptions => ({
    maxAnswerBytes: c.limits.maxUpstreamBytes,
    onNodeFailure: faults.nodeFailed,
    durations: (network, node, kind) => durations.forNode(network, node, kind),
    health: {
      failureThreshold: c.health.failureThreshold,
      cooldownMs: c.health.cooldownMs,
      maxErrorRate: c.health.maxErrorRate,
      maxLagBlocks: c.health.maxLagBlocks,
    },
    methodSetAsideMs: c.health.methodSetAsideMs,
    capacityWaitMs: c.limits.capacityWaitMs,
    instances: () => Math.max(1, fleet?.fleet()?.members().length ?? 1),
  })
  const upstreams = closers.add('upstreams', Upstreams.fromConfig(config.networks, upstreamsOptions(config)), (u) => u.close())
  const subscriptions = closers.add(
    'subscriptions',
    Subscriptions.fromUpstreams(upstreams, {
      timeoutMs: config.limits.upstreamTimeoutMs,
      maxLogsFiltersPerKey: config.ws.maxLogsFiltersPerKey,
      maxLogsFiltersPerAccount: config.ws.maxLogsFiltersPerAccount,
      maxLogsFiltersPerNetwork: config.ws.maxLogsFiltersPerNetwork,
      onWarning: (msg, detail) => logger.warn(detail ?? {}, msg),
    }),
    (s) => s.close(),
  )
  // Said once at start, where the operator looks: a client's eth_subscribe there can never be served.
  for (const [network, n] of Object.entries(config.networks)) {
    if (!n.upstreams.some((u) => u.ws !== undefined)) {
      logger.warn({ network }, `no node of ${network} has a WebSocket (networks.${network}.upstreams[].ws): eth_subscribe is refused there (NO_WS_UPSTREAM)`)
    }
  }
  const pools = closers.add(
    'account pools',
    new PoolSelector(upstreams, store, { maxAnswerBytes: config.limits.maxUpstreamBytes, onNodeFailure: faults.nodeFailed }, (pool) =>
      subscriptions.retire(pool),
    ),
    (p) => p.close(),
  )
  const heads = new HeadTracker()
  const nodeHeads = await watchNodeHeads(upstreams, heads, config, () => live, logger, closers)
  const { cache, finality } = await openAnswerCache(upstreams, heads, config, () => live, logger, closers)

  // The projections catch up before the first call, then follow the log.
  const projector = closers.add(
    'projector',
    new Projector(store, log, {
      usage: config.usage.project,
      onApplied: (changes) => {
        keys.refresh(changes)
        ips.refresh(changes.penaltyKeys)
        pools.refresh(changes.accountIds)
      },
      onError: (err) => (err instanceof EventLogUnavailable ? outage.report(err) : logger.error({ err }, 'projection failed; retrying')),
    }),
    (p) => p.stop(),
  )
  try {
    await projector.catchUp()
  } catch (err) {
    // A NATS outage must not keep a gateway from starting: its LMDB projections hold the keys and
    // plans as last seen, and the follower catches up once the log is back.
    if (!(err instanceof EventLogUnavailable)) throw err
    outage.report(err)
  }
  projector.start()

  // Usage and decisions, counted per interval into the outbox (stopped before it is flushed).
  const emit = (inputs: readonly EventInput[]) => outbox.publish(inputs.map((i) => makeEvent(i, clock.now())))
  const usage = closers.add('usage meter', new UsageMeter({ clock, intervalMs: config.usage.intervalMs, instance, emit }), (u) => u.stop())
  usage.start()
  const wsDecisions = closers.add('WebSocket decisions', new WsDecisions({ clock, intervalMs: config.usage.intervalMs, instance, emit }), (d) => d.stop())
  wsDecisions.start()

  // The call path: admission, then the dispatcher that meters, routes and calls the nodes.
  const caller = new UpstreamCaller({
    timeoutMs: config.limits.upstreamTimeoutMs,
    heavy: config.heavy,
    evm: config.evm,
    hedge: config.hedge,
    cache,
    finalized: finality ? (network) => finality.finalized(network) : undefined,
  })
  closers.defer('EVM workers', () => caller.evm.runner.close())
  // A network that verifies calls runs them in worker threads: loaded now, not by the first call.
  if (Object.values(config.networks).some((n) => n.verify === 'calls')) caller.evm.runner.warm()
  caller.transactions.broadcastOn(broadcastNetworks(config))
  const admission = new Admission({ upstreams, ips, keys, pools, refusals: usage, tokens: { ...config.keys.jwt, now: () => clock.now() } })
  // Which methods are served, each with its cost (the method table's, or config.methodCosts), and
  // which unlisted ones each network forwards (networks.<slug>.forwardMethods; a reload sets them again).
  const methodRules = new MethodRules(config.methodCosts, forwardMethodsOf(config))
  const meter = opts.meterUsage === false ? NO_USAGE : usage
  // Each key's heavy calls at the nodes at once (heavy.atOnce, or its plan's heavyCallsAtOnce).
  const heavyCalls = new HeavyCalls({ atOnce: config.heavy.atOnce, waitMs: config.heavy.atOnceWaitMs })
  // The charge to a key's rate (its queueMs the config's in force, read per call) and the method
  // rules, made into each transport's call policy for the dispatcher.
  const charging = { usage: meter, queueMs: () => live.limits.queueMs, onRejected: (ip: string, n: number) => ips.rejected(ip, n) }
  const dispatcher = new RpcDispatcher({
    policies: callPolicies(methodRules, charging),
    heavy: heavyCalls,
    usage: meter,
    limits: () => live.limits,
    heads,
    filters,
    windowBlocks: config.routing.fullNodeWindowBlocks,
    caller,
    onServerError: faults.answered,
    diagnosticHeaders: config.diagnostics.responseHeaders,
  })

  // Metrics. Label values only from the config: an unknown slug in a request counts as `other`.
  const networkLabels = new NetworkLabels(Object.keys(config.networks))
  registerStateMetrics(registry, { log, outbox, store, keys, usage })
  if (fleet) registerFleetMetrics(registry, fleet)
  registerCallPathMetrics(registry, { upstreams, caller, cache, finality, heavy: heavyCalls, filters })

  // The front end: HTTP and WebSocket on `listen`, the dashboard, the admin listener.
  const wsServer = new WsServer({
    admission,
    ips,
    trustProxy: config.trustProxy,
    subscriptions,
    dispatcher,
    usage,
    decisions: wsDecisions,
    counters: new WsCounters(registry, networkLabels, () => subscriptions.stats()),
    config: config.ws,
    clock,
    allowance: fleet && ((accountId, max) => fleet.allowance(accountId, max)),
    onError: (err) => logger.error({ err }, 'unexpected error on the WebSocket path'),
  })
  const secret = opts.secret ?? process.env.TOLLGATE_SECRET
  let baseUrl = ''
  const dashboard: DashboardService | undefined =
    secret === undefined || secret === ''
      ? undefined
      : new DashboardService({
          config,
          log,
          store,
          projector,
          catalog,
          clock,
          upstreams,
          secret,
          baseUrl: () => baseUrl,
          // A limit for all clients together (new accounts) is split between the fleet's live instances.
          fleetSize: () => Math.max(1, fleet?.fleet()?.members().length ?? 1),
          askUsage: usageAsker && ((accountId, hours, now) => usageAsker.ask(accountId, hours, now)),
        })
  const server = new HttpServer({
    admission,
    keys,
    trustProxy: config.trustProxy,
    dispatcher,
    counters: new HttpCounters(registry, networkLabels),
    maxBodyBytes: config.limits.maxBodyBytes,
    bodyTimeoutMs: config.limits.bodyTimeoutMs,
    // Ready when the projections caught up, or the log cannot be reached: an outage of NATS must
    // not take every instance out of its load balancer at once; they serve from the last state.
    ready: () => projector.caughtUp() || !log.connected,
    onError: (err) => logger.error({ err }, 'unexpected error on the request path'),
    pages: dashboardPages(
      () => dashboard,
      opts.dashboardDir ?? dashboardDir(),
      (err) => logger.error({ err }, 'unexpected error on the request path'),
    ),
    routes: (app, exchanges) => wsServer.register(app, exchanges),
  })
  closers.defer('front end', () => server.close())
  // Alone on the port, unless a worker: the workers of one supervisor share it (SO_REUSEPORT).
  const port = await server.listen(config.listen.host, config.listen.port, { shared: opts.worker !== undefined })
  const adminServer = new AdminServer({
    registry,
    token,
    notReady: () => server.notReady(),
    warnings: () => upstreams.warnings(),
    onError: (err) => logger.error({ err }, 'unexpected error on the admin listener'),
  })
  closers.defer('admin listener', () => adminServer.close())
  const adminPort = await adminServer.listen(config.admin.listen.host, config.admin.listen.port)
  if (fleet) {
    const started = fleet.start(`${urlHost(config.listen.host)}:${port}`)
    closers.defer('fleet', () => started.stop())
  }

  const http = config.publicUrl?.replace(/\/$/, '') ?? `http://${urlHost(config.listen.host)}:${port}`
  const ws = http.replace(/^http/, 'ws')
  baseUrl = http
  const admin = `http://${urlHost(config.admin.listen.host)}:${adminPort}`
  logger.info({ http, ws, admin, events: log.kind, networks: Object.keys(config.networks) }, 'ready')

  /**
   * The graceful stop, in the order that never answers a call with a part already closed: the
   * front end drains first (readiness 503, no new connections, `Connection: close` on every answer,
   * WebSocket clients told 1001 "going away"), the calls in flight are answered, the idle
   * keep-alive sockets are closed, then the parts close, the last opened first: the usage of the
   * current interval and the outbox go to the event log, and the stores close last. Past
   * `shutdownMs` the calls still open are cut.
   */
  let closing: Promise<void> | undefined
  const close = async (): Promise<void> => {
    deadline = Date.now() + config.shutdownMs
    try {
      logger.info({ calls: server.exchanges.open, webSockets: wsServer.size, shutdownMs: config.shutdownMs }, 'draining')
      server.drain()
      adminServer.drain()
      wsServer.close()
      const drained = await server.exchanges.quiet(deadline)
      if (!drained) logger.warn({ calls: server.exchanges.open, shutdownMs: config.shutdownMs }, 'shutdownMs passed with calls still open: they are cut')
    } finally {
      // Whatever the drain met, every part is closed: nothing may keep the process alive.
      await closeAll()
    }
  }
  /** Each reloadable part, in the order a reload applies them (reloadParts). */
  const parts = reloadParts({
    upstreams,
    upstreamsOptions,
    subscriptions,
    accountPools: pools,
    nodeHeads,
    heads,
    networkLabels,
    transactions: caller.transactions,
    methodRules,
    caller,
    inForce: { apply: (next) => (live = next.config) },
    ips,
    keys,
    dashboard,
  })
  /**
   * A reload: refused whole when a start-only field changed or the catalog cannot be read, else
   * each part applied in its order (reloadParts); a part that throws is named in the outcome.
   */
  const reload = (next: Config): ReloadOutcome => {
    if (closing !== undefined) return { applied: false, error: new Error('the gateway is draining: a reload would change nothing that lasts') }
    const restart = restartNeeded(live, next)
    if (restart.length > 0) return { applied: false, restart }
    let nextCatalog: PlanCatalog
    try {
      nextCatalog = loadPlanCatalog(next.plans.catalog)
    } catch (err) {
      return { applied: false, error: err as Error }
    }
    const before = { config: live, catalog }
    const step: ReloadStep = { config: next, catalog: nextCatalog, nodes: NO_NODE_CHANGE }
    try {
      applyParts(parts, step)
    } catch (err) {
      if (err instanceof ReloadPartFailed) return { applied: false, failed: err }
      throw err
    }
    catalog = nextCatalog
    return { applied: true, changes: reloadReport(before, { config: next, catalog: nextCatalog }, step.nodes) }
  }

  return {
    reload,
    http,
    ws,
    port,
    admin,
    log,
    store,
    outbox,
    usage,
    projector,
    upstreams,
    caller,
    cache,
    finality,
    close: () => (closing ??= close()),
  }
}

/** A host as it goes in a URL: an IPv6 address in brackets. */
function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host
}

/** Counts nothing (meterUsage: false). */
const NO_USAGE: UsageSink = { served: () => {}, rateLimited: () => {}, keyRuleRefused: () => {} }
