import { mkdirSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import type { Logger } from 'pino'
import type { Config } from '../config/types.js'
import { systemClock, type Clock } from '../../actors/runtime/clock.js'
import { openEventLog } from '../events/open-log.js'
import { EventLogUnavailable, type EventLog } from '../events/log.js'
import { Outbox } from '../events/outbox.js'
import { eventLogOutage, type EventLogParts } from '../events/outage-log.js'
import { makeEvent } from '../events/make-event.js'
import type { EventInput } from '../events/types.js'
import { StateStore } from '../store/state-store.js'
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
import { chargePerCall, chargeUnitsOnly } from '../gateway/call-charge.js'
import { dashboardPages } from '../dashboard/api-routes.js'
import { HeavyCalls } from '../gateway/heavy-calls.js'
import { MethodRules } from '../rpc/method-policy.js'
import { HttpServer } from '../front/http-server.js'
import type { Exchanges } from '../front/exchanges.js'
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
import { NodeHeadMonitor } from '../upstream/node-heads.js'
import { ImmutableCache } from '../cache/immutable-cache.js'
import { FinalityTracker } from '../cache/finality.js'
import { UpstreamCaller } from '../gateway/upstream-caller.js'
import { registerCallPathMetrics } from '../gateway/call-path-metrics.js'
import { registerStateMetrics } from '../gateway/state-metrics.js'
import { FaultLog } from '../gateway/fault-log.js'
import { Closers } from './closers.js'
import { lockDataDir } from './data-dir-lock.js'
import { Fleet } from '../fleet/fleet.js'
import { FleetBus, fleetSubjectRoot, type FleetChannel } from '../fleet/fleet-bus.js'
import { registerFleetMetrics } from '../fleet/fleet-metrics.js'
import { VERSION } from '../fleet/package-version.js'
import { catalogChanges, changedPaths, restartNeeded, type ReloadOutcome } from './reload.js'
import type { PlanCatalog } from '../plans/catalog.js'
import type { UpstreamsOptions } from '../upstream/upstreams.js'

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
  readonly calls: UpstreamCaller
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
  /** The config in force: the start's, then each reload's (read by the parts that poll, never per call). */
  let live = config
  /** When the drain began plus shutdownMs: what is left of it goes to flushing the outbox. */
  let deadline = Number.POSITIVE_INFINITY

  // Events and state: the log, the projections it feeds, the outbox that feeds it. An outage of
  // NATS is logged once, whichever of them meets it, then its state every 30 s.
  const store = closers.add('state store', StateStore.open(join(ownDir, 'state')), (s) => s.close())
  const parts: EventLogParts = {}
  const outage = closers.add('outage log', eventLogOutage(logger, parts, config.events.outageLogEveryMs), (o) => o.close())
  const log = closers.add('event log', await openEventLog(config.events, config.dataDir, { whileNatsIsDown: (err) => outage.report(err) }), (l) => l.close())
  parts.log = log
  const outbox = closers.add(
    'outbox',
    Outbox.open(join(ownDir, 'outbox'), log, {
      onError: (err) => (err instanceof EventLogUnavailable ? outage.report(err) : logger.warn({ err: String(err) }, 'outbox error')),
      // After a disruption the last acknowledged events are sent again; the log drops what it holds.
      onResent: (count) =>
        logger.info({ count }, 'events acknowledged in the last minutes sent again after a disruption of the event log (duplicates are dropped by id)'),
    }),
    async (o) => {
      try {
        // What is left of shutdownMs, and at least a second: usage is what the drain is for.
        await o.flush(Math.max(1_000, Math.min(deadline, Date.now() + config.shutdownMs) - Date.now()))
      } catch (err) {
        logger.warn({ err: String(err), pending: o.pending() }, 'events left in the outbox; the next start sends them')
      }
      await o.close()
    },
  )
  parts.outbox = outbox

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
  const fleet = config.events.nats === undefined && channel === undefined ? undefined : openFleet(config, keys, instance, clock, logger, closers, channel)
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
  const pools = closers.add(
    'account pools',
    new PoolSelector(upstreams, store, { maxAnswerBytes: config.limits.maxUpstreamBytes, onNodeFailure: faults.nodeFailed }, (pool) =>
      subscriptions.retire(pool),
    ),
    (p) => p.close(),
  )
  const heads = new HeadTracker()
  const nodeHeads = closers.add(
    'node heads',
    new NodeHeadMonitor(upstreams, {
      intervalMs: config.health.pollMs,
      timeoutMs: Math.min(config.limits.upstreamTimeoutMs, 5_000),
      onBest: (network, best) => heads.observe(network, best),
      onChange: (network, node, behind, lag) =>
        logger.warn(
          { network, node, lag, maxLagBlocks: live.health.maxLagBlocks },
          behind ? 'node behind the best node of its network: taken out' : 'node caught up: back in',
        ),
      onChain: (network, node, wrong, chainId, expectedChainId) =>
        wrong
          ? logger.error(
              { network, node, chainId, expectedChainId },
              "node on another chain than its network: taken out until it answers the network's chain id; fix the node's URL or the network's chainId",
            )
          : logger.warn({ network, node, chainId }, "node back on its network's chain: back in"),
    }),
    (n) => n.stop(),
  )
  await nodeHeads.start()
  const cache = config.cache.enabled
    ? closers.add('cache', ImmutableCache.open(config.cache.path ?? join(config.dataDir, 'cache'), { maxBytes: config.cache.maxBytes }), (c) => c.close())
    : undefined
  const finality = cache
    ? closers.add(
        'finality',
        new FinalityTracker(upstreams, {
          intervalMs: config.cache.finalityPollMs,
          timeoutMs: Math.min(config.limits.upstreamTimeoutMs, 5_000),
          depthFor: (network) => live.networks[network]?.finalityDepth ?? config.cache.finalityDepth,
          headOf: (network) => heads.head(network),
          onReorg: async (network, block) => {
            logger.warn({ network, block }, 'a block at or below the finalized one changed (reorg): the cached answers of the network are dropped')
            await cache.invalidate(network)
          },
          onModeChosen: (network, mode) =>
            logger.info(
              { network, mode },
              mode === 'tag' ? "finality: the nodes' finalized block" : 'finality: head minus finalityDepth (the nodes have no finalized tag)',
            ),
          onError: (network, err) => logger.debug({ network, err: String(err) }, 'finality poll failed'),
        }),
        (f) => f.stop(),
      )
    : undefined
  await finality?.start()

  // The projections catch up before the first call, then follow the log.
  const projector = closers.add(
    'projector',
    new Projector(store, log, {
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
  const calls = new UpstreamCaller({
    timeoutMs: config.limits.upstreamTimeoutMs,
    heavy: config.heavy,
    hedge: config.hedge,
    cache,
    finalized: finality ? (network) => finality.finalized(network) : undefined,
  })
  const broadcastOn = (c: Config) => calls.transactions.broadcastOn(Object.keys(c.networks).filter((slug) => c.networks[slug].broadcastTransactions === true))
  broadcastOn(config)
  const admission = new Admission({ upstreams, ips, keys, pools, refusals: usage, tokens: { ...config.keys.jwt, now: () => clock.now() } })
  // Which methods are served, each with its cost (the method table's, or config.methodCosts), and
  // which unlisted ones each network forwards (networks.<slug>.forwardMethods; a reload sets them again).
  const forwardMethodsOf = (c: Config) => Object.fromEntries(Object.entries(c.networks).map(([slug, n]) => [slug, n.forwardMethods]))
  const methodRules = new MethodRules(config.methodCosts, forwardMethodsOf(config))
  const meter = opts.meterUsage === false ? NO_USAGE : usage
  // Each key's heavy calls at the nodes at once (heavy.atOnce, or its plan's heavyCallsAtOnce).
  const heavyCalls = new HeavyCalls({ atOnce: config.heavy.atOnce, waitMs: config.heavy.atOnceWaitMs })
  const dispatcher = new RpcDispatcher({
    heavy: heavyCalls,
    usage: meter,
    limits: config.limits,
    heads,
    filters,
    windowBlocks: config.routing.fullNodeWindowBlocks,
    calls,
    onServerError: faults.answered,
    diagnosticHeaders: config.diagnostics.responseHeaders,
  })

  // Metrics. Label values only from the config: an unknown slug in a request counts as `other`.
  const networkLabels = new NetworkLabels(Object.keys(config.networks))
  registerStateMetrics(registry, { log, outbox, store, keys, usage })
  if (fleet) registerFleetMetrics(registry, fleet)
  registerCallPathMetrics(registry, { upstreams, calls, cache, finality, heavy: heavyCalls, filters })

  // The front end: HTTP and WebSocket on `listen`, the dashboard, the admin listener.
  // Read per call as a field; a reload replaces its queueMs.
  const charging = { usage: meter, queueMs: config.limits.queueMs, onRejected: (ip: string, n: number) => ips.rejected(ip, n) }
  const wsServer = new WsServer({
    admission,
    methodRules,
    chargeUnits: chargeUnitsOnly(charging),
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
        })
  const server = new HttpServer({
    admission,
    keys,
    trustProxy: config.trustProxy,
    dispatcher,
    methodRules,
    chargeCalls: chargePerCall(charging),
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
  fleet?.start(`${urlHost(config.listen.host)}:${port}`)

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
      const drained = await quiet(server.exchanges, deadline)
      if (!drained) logger.warn({ calls: server.exchanges.open, shutdownMs: config.shutdownMs }, 'shutdownMs passed with calls still open: they are cut')
    } finally {
      // Whatever the drain met, every part is closed: nothing may keep the process alive.
      await closeAll()
    }
  }
  /**
   * A reload, in the order that never leaves a call without a node: the new nodes are made and
   * the pools given them, the subscriptions move off the dropped nodes, then the dropped nodes are
   * closed once their calls end; then the plans and limits for the next calls.
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
    const nodes = upstreams.reconfigure(next.networks, upstreamsOptions(next))
    subscriptions.reconfigure(upstreams)
    subscriptions.retune(next.limits.upstreamTimeoutMs)
    pools.sharedDropped(nodes.dropped)
    nodeHeads.reconfigure(nodes.built, nodes.dropped, next.health.pollMs, Math.min(next.limits.upstreamTimeoutMs, 5_000))
    upstreams.retire(nodes.dropped)
    for (const network of nodes.networksRemoved) heads.forget(network)
    networkLabels.add(Object.keys(next.networks))
    broadcastOn(next)
    methodRules.setForwardMethods(forwardMethodsOf(next))
    calls.retune(next.limits.upstreamTimeoutMs, next.hedge)
    dispatcher.setLimits(next.limits)
    charging.queueMs = next.limits.queueMs
    ips.limits = next.limits.ipThrottle
    const plans = catalogChanges(catalog, nextCatalog)
    keys.setCatalog(nextCatalog)
    dashboard?.reconfigure(next, nextCatalog)
    const changes: Record<string, unknown> = {}
    if (nodes.networksAdded.length > 0) changes.networksAdded = nodes.networksAdded
    if (nodes.networksRemoved.length > 0) changes.networksRemoved = nodes.networksRemoved
    if (nodes.nodes.length > 0) changes.nodes = nodes.nodes
    if (plans.added.length + plans.removed.length + plans.changed.length > 0 || plans.catalog !== undefined) changes.plans = plans
    for (const section of ['limits', 'health', 'hedge'] as const) {
      const paths = changedPaths(live[section], next[section], section)
      if (paths.length > 0) changes[section] = paths
    }
    // Other network settings (finalityDepth, broadcastTransactions, forwardMethods) than the nodes and consensus.
    const networkPaths = changedPaths(live.networks, next.networks, 'networks').filter((p) => !/^networks\.[^.]+\.(upstreams|consensus)/.test(p))
    const common = networkPaths.filter((p) => Object.hasOwn(live.networks, p.split('.')[1]) && Object.hasOwn(next.networks, p.split('.')[1]))
    if (common.length > 0) changes.networks = common
    catalog = nextCatalog
    live = next
    return { applied: true, changes }
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
    calls,
    cache,
    finality,
    close: () => (closing ??= close()),
  }
}

/** The fleet's bus and membership; it starts announcing itself once the front end listens. */
function openFleet(
  config: Config,
  keys: KeyDirectory,
  instance: string,
  clock: Clock,
  logger: Logger,
  closers: Closers,
  channel: FleetChannel | undefined,
): { allowance: Fleet['allowance']; start(address: string): void; fleet(): Fleet | undefined } {
  let fleet: Fleet | undefined
  const bus = closers.add(
    'fleet bus',
    channel ??
      FleetBus.open(config.events.nats!, fleetSubjectRoot(config), (connected) => {
        if (!connected) logger.warn("cut off from the fleet: each key gets this instance's share of its limits until NATS is back")
        fleet?.connectionChanged(connected)
      }),
    (b) => b.close(),
  )
  return {
    allowance: (accountId, max) => fleet?.allowance(accountId, max) ?? max,
    fleet: () => fleet,
    start: (address) => {
      fleet = new Fleet({
        bus,
        keys,
        self: { id: instance, address: config.publicUrl ?? address, startedAt: Date.now(), version: VERSION },
        clock,
        ...config.fleet,
        onMembership: (event, id, live) =>
          logger.info({ instance: id, live }, event === 'joined' ? 'an instance joined the fleet' : 'an instance left the fleet (silent)'),
        onShare: (share) =>
          logger.warn({ share }, share < 1 ? "cut off from the fleet: applying this share of each key's limits" : 'back in the fleet: whole limits, shared'),
      })
      fleet.start()
      closers.defer('fleet', () => fleet?.stop())
    },
  }
}

/**
 * A drained front end stays open this long with no exchange before its sockets are closed: a
 * client that was between two calls when the drain began sends its next one now, and gets it
 * answered (with `Connection: close`) instead of finding its kept-alive socket reset.
 */
const DRAIN_QUIET_MS = 100

/** Resolves true once no exchange has been open for DRAIN_QUIET_MS, false at `deadline`. */
async function quiet(exchanges: Exchanges, deadline: number): Promise<boolean> {
  for (;;) {
    const left = deadline - Date.now()
    if (left <= 0) return false
    let timer: NodeJS.Timeout | undefined
    const timeUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))
    await Promise.race([exchanges.idle(), timeUp])
    clearTimeout(timer)
    if (exchanges.open > 0) return false
    await new Promise((resolve) => setTimeout(resolve, Math.min(DRAIN_QUIET_MS, Math.max(0, deadline - Date.now()))))
    if (exchanges.open === 0) return true
  }
}

/** A host as it goes in a URL: an IPv6 address in brackets. */
function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host
}

/** Counts nothing (meterUsage: false). */
const NO_USAGE: UsageSink = { served: () => {}, rateLimited: () => {}, keyRuleRefused: () => {} }
