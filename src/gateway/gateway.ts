import { mkdirSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import type { Logger } from 'pino'
import type { Config } from '../config/types.js'
import { systemClock, type Clock } from '../../actors/runtime/clock.js'
import { openEventLog } from '../events/open-log.js'
import type { EventLog } from '../events/log.js'
import { Outbox } from '../events/outbox.js'
import { makeEvent } from '../events/make-event.js'
import type { EventInput } from '../events/types.js'
import { StateStore } from '../store/state-store.js'
import { Projector } from '../projections/projector.js'
import { loadPlanCatalog } from '../plans/catalog.js'
import { Upstreams } from '../upstream/upstreams.js'
import { UsageMeter } from '../usage/usage-meter.js'
import { Metrics } from '../metrics/metrics.js'
import { KeyDirectory } from './key-directory.js'
import { RpcDispatcher, type UsageSink } from './rpc-dispatcher.js'
import { HttpServer } from '../front/http-server.js'
import { HttpCounters } from '../front/http-counters.js'
import { IpDirectory } from './ip-directory.js'
import { HeadTracker } from './head-tracker.js'
import { FilterPins } from './filter-pins.js'
import { Subscriptions } from '../ws/subscriptions.js'
import { WsCounters } from '../ws/ws-counters.js'
import { WsDecisions } from '../ws/ws-decisions.js'
import { WsServer } from '../ws/ws-server.js'
import { PoolSelector } from './pool-selector.js'
import { DashboardService } from '../dashboard/dashboard-service.js'
import { dashboardDir } from '../dashboard/static-files.js'
import { NodeHeadMonitor } from '../upstream/node-heads.js'
import { ImmutableCache } from '../cache/immutable-cache.js'
import { FinalityTracker } from '../cache/finality.js'
import { UpstreamCaller } from './upstream-caller.js'
import { registerCallPathMetrics } from './call-path-metrics.js'

export interface RunningGateway {
  /** Base URL of the HTTP endpoints, e.g. http://127.0.0.1:8080 */
  readonly http: string
  /** Base URL of the WebSocket endpoints, e.g. ws://127.0.0.1:8080 */
  readonly ws: string
  readonly port: number
  readonly log: EventLog
  readonly store: StateStore
  readonly outbox: Outbox
  readonly usage: UsageMeter
  readonly projector: Projector
  /** The upstream pools (node counters and health, for tests and tools). */
  readonly upstreams: Upstreams
  /** Cache, in-flight sharing, getLogs splitting (counters, for tests and tools). */
  readonly calls: UpstreamCaller
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
}

/**
 * Start the gateway: open the event log and the LMDB projections, catch up, then serve. The
 * request path reads key state from memory (refreshed by the projector) and hands usage to the
 * outbox without waiting: the event log is never on the path of a call.
 */
export async function startGateway(config: Config, opts: GatewayOptions): Promise<RunningGateway> {
  const { logger } = opts
  const clock = opts.clock ?? systemClock
  const instance = opts.instance ?? `${hostname()}-${process.pid}-${Date.now().toString(36)}`
  mkdirSync(config.dataDir, { recursive: true })

  const catalog = loadPlanCatalog(config.plans.catalog)
  const log = await openEventLog(config.events, config.dataDir)
  const store = StateStore.open(join(config.dataDir, 'state'))
  const outbox = Outbox.open(join(config.dataDir, 'outbox'), log, {
    onError: (err) => logger.warn({ err: String(err) }, 'event log unavailable; events wait in the outbox'),
  })
  const keys = new KeyDirectory(store, catalog, clock, {
    ws: config.ws,
    // The end of a plan period is a decision too: the first instance that sees it says so.
    onPlanEnded: (account, planId, endedAt) =>
      outbox.publish([makeEvent({ type: 'PlanEnded', accountId: account.accountId, planId, reason: 'expired' }, endedAt)]),
  })
  const ips = new IpDirectory(store, clock, config.limits.ipThrottle, (ip, until, rejections) => {
    logger.warn({ ip, until: new Date(until).toISOString(), rejections }, 'client IP throttled')
    outbox.publish([
      makeEvent({ type: 'IpThrottled', ip, until, reason: 'rate-limit-rejections', rejections, windowMs: config.limits.ipThrottle.windowMs, instance }, clock.now()),
    ])
  })
  const upstreams = Upstreams.fromConfig(config.networks, {
    health: {
      failureThreshold: config.health.failureThreshold,
      cooldownMs: config.health.cooldownMs,
      maxErrorRate: config.health.maxErrorRate,
      maxLagBlocks: config.health.maxLagBlocks,
    },
  })
  const pools = new PoolSelector(upstreams, store)
  const projector = new Projector(store, log, {
    onApplied: (changes) => {
      keys.refresh(changes)
      ips.refresh(changes.penaltyKeys)
      pools.refresh(changes.accountIds)
    },
    onError: (err) => logger.error({ err }, 'projection failed; retrying'),
  })
  await projector.catchUp()
  projector.start()
  const usage = new UsageMeter({
    clock,
    intervalMs: config.usage.intervalMs,
    instance,
    emit: (inputs) => outbox.publish(inputs.map((i) => makeEvent(i as EventInput, clock.now()))),
  })
  usage.start()
  const wsDecisions = new WsDecisions({
    clock,
    intervalMs: config.usage.intervalMs,
    instance,
    emit: (inputs) => outbox.publish(inputs.map((i) => makeEvent(i, clock.now()))),
  })
  wsDecisions.start()

  const metrics = new Metrics()
  const counters = new HttpCounters(metrics)
  const outboxGauge = metrics.gauge('tollgate_outbox_pending_events', 'Events waiting in the durable outbox for the event log')
  const checkpointGauge = metrics.gauge('tollgate_projection_checkpoint', 'Last event log position applied to the LMDB projections')
  const keysGauge = metrics.gauge('tollgate_active_keys', 'Key actors in memory')
  const upCalls = metrics.gauge('tollgate_upstream_calls', 'Calls sent to each node since start')
  const upFailures = metrics.gauge('tollgate_upstream_failures', 'Transport failures and time-outs of each node since start')
  const upHealthy = metrics.gauge('tollgate_upstream_healthy', '1 when the node takes calls, 0 while it is out')
  const upInFlight = metrics.gauge('tollgate_upstream_in_flight', 'Calls waiting for each node now')
  metrics.onCollect(() => {
    for (const s of upstreams.stats()) {
      const labels = { network: s.network, node: s.node, kind: s.kind }
      upCalls.set(s.calls, labels)
      upFailures.set(s.failures, labels)
      upHealthy.set(s.healthy ? 1 : 0, labels)
      upInFlight.set(s.inFlight, labels)
    }
    outboxGauge.set(outbox.pending())
    checkpointGauge.set(store.checkpoint())
    keysGauge.set(keys.size)
  })
  const heads = new HeadTracker()
  const nodeHeads = new NodeHeadMonitor(upstreams, {
    intervalMs: config.health.pollMs,
    timeoutMs: Math.min(config.limits.upstreamTimeoutMs, 5_000),
    onBest: (network, best) => heads.observe(network, best),
    onChange: (network, node, behind, lag) =>
      logger.warn({ network, node, lag, maxLagBlocks: config.health.maxLagBlocks }, behind ? 'node behind the best node of its network: taken out' : 'node caught up: back in'),
  })
  await nodeHeads.start()
  const cache = config.cache.enabled ? ImmutableCache.open(config.cache.path ?? join(config.dataDir, 'cache'), { maxBytes: config.cache.maxBytes }) : undefined
  const finality = cache
    ? new FinalityTracker(upstreams, {
        intervalMs: config.cache.finalityPollMs,
        timeoutMs: Math.min(config.limits.upstreamTimeoutMs, 5_000),
        depthFor: (network) => config.networks[network]?.finalityDepth ?? config.cache.finalityDepth,
        headOf: (network) => heads.head(network),
        onReorg: async (network, block) => {
          logger.warn({ network, block }, 'a block at or below the finalized one changed (reorg): the cached answers of the network are dropped')
          await cache.invalidate(network)
        },
        onModeChosen: (network, mode) => logger.info({ network, mode }, mode === 'tag' ? 'finality: the nodes\' finalized block' : 'finality: head minus finalityDepth (the nodes have no finalized tag)'),
        onError: (network, err) => logger.debug({ network, err: String(err) }, 'finality poll failed'),
      })
    : undefined
  await finality?.start()
  const calls = new UpstreamCaller({
    timeoutMs: config.limits.upstreamTimeoutMs,
    heavy: config.heavy,
    hedge: config.hedge,
    cache,
    finalized: finality ? (network) => finality.finalized(network) : undefined,
  })
  registerCallPathMetrics(metrics, { upstreams, calls, cache, finality })
  const filters = new FilterPins(clock)
  const dispatcher = new RpcDispatcher({
    usage: opts.meterUsage === false ? NO_USAGE : usage,
    limits: config.limits,
    heads,
    filters,
    windowBlocks: config.routing.fullNodeWindowBlocks,
    onRejected: (ip, n) => ips.rejected(ip, n),
    calls,
  })
  const subscriptions = Subscriptions.fromUpstreams(upstreams, {
    timeoutMs: config.limits.upstreamTimeoutMs,
    onWarning: (msg, detail) => logger.warn(detail ?? {}, msg),
  })
  const wsServer = new WsServer({
    keys,
    ips,
    trustProxy: config.trustProxy,
    upstreams,
    subscriptions,
    dispatcher,
    usage,
    decisions: wsDecisions,
    counters: new WsCounters(metrics, () => subscriptions.stats()),
    config: config.ws,
    clock,
    onError: (err) => logger.error({ err }, 'unexpected error on the WebSocket path'),
  })
  const secret = opts.secret ?? process.env.TOLLGATE_SECRET
  let baseUrl = ''
  const dashboard =
    secret === undefined || secret === ''
      ? undefined
      : new DashboardService({ config, log, store, projector, catalog, clock, upstreams, secret, baseUrl: () => baseUrl })
  const server = new HttpServer({
    keys,
    ips,
    pools,
    trustProxy: config.trustProxy,
    upstreams,
    dispatcher,
    counters,
    metrics,
    maxBodyBytes: config.limits.maxBodyBytes,
    ready: () => projector.caughtUp(),
    dashboard: { service: () => dashboard, staticDir: opts.dashboardDir ?? dashboardDir() },
    onError: (err) => logger.error({ err }, 'unexpected error on the request path'),
    routes: (app) => wsServer.register(app),
  })
  const port = await server.listen(config.listen.host, config.listen.port)
  const sweeper = setInterval(() => {
    keys.sweep()
    ips.sweep()
    filters.sweep()
  }, 60_000)
  sweeper.unref()

  const host = config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host
  const http = config.publicUrl?.replace(/\/$/, '') ?? `http://${host}:${port}`
  const ws = http.replace(/^http/, 'ws')
  baseUrl = http
  logger.info({ http, ws, events: log.kind, networks: Object.keys(config.networks) }, 'ready')

  let closed = false
  return {
    http,
    ws,
    port,
    log,
    store,
    outbox,
    usage,
    projector,
    upstreams,
    calls,
    cache,
    finality,
    async close() {
      if (closed) return
      closed = true
      server.close()
      wsServer.close()
      subscriptions.close()
      clearInterval(sweeper)
      nodeHeads.stop()
      finality?.stop()
      usage.stop()
      wsDecisions.stop()
      try {
        await outbox.flush(5_000)
      } catch (err) {
        logger.warn({ err: String(err), pending: outbox.pending() }, 'events left in the outbox; the next start sends them')
      }
      await outbox.close()
      await projector.stop()
      await pools.close()
      await upstreams.close()
      await cache?.close()
      await log.close()
      store.close()
    },
  }
}

/** Counts nothing (meterUsage: false). */
const NO_USAGE: UsageSink = { served: () => {}, rateLimited: () => {} }
