import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import pino, { type Logger } from 'pino'
import { request, type Dispatcher } from 'undici'
import { parseConfig } from '../../src/config/load.js'
import type { Config, LimitsConfig, NetworkConfig, WsConfig } from '../../src/config/types.js'
import { startGateway } from '../../src/main/start-gateway.js'
import type { RunningGateway } from '../../src/main/running-gateway.js'
import { createAccount, regenerateKey } from '../../src/accounts/commands.js'
import { registerJwtKey, restrictKey } from '../../src/accounts/key-settings.js'
import type { KeyRestrictions } from '../../src/keys/key-restrictions.js'
import { KeyCipher } from '../../src/keys/key-cipher.js'
import { loadPlanCatalog } from '../../src/plans/catalog.js'
import { systemClock, type Clock } from '../../actors/runtime/clock.js'
import type { Entitlement } from '../../src/events/types.js'

export const TEST_SECRET = 'test-secret-0123456789abcdef0123456789abcdef'

/**
 * The `networks` of a gateway with one network, eth-1 on anvil's chain, its nodes full nodes
 * unless said otherwise.
 * @example
 * startTestGateway(t, { networks: oneNetwork([{ url: anvil.url, name: 'a' }, { url: proxy.url, name: 'b' }]) })
 */
export function oneNetwork(
  upstreams: ReadonlyArray<{ url: string; name?: string; kind?: 'full' | 'archive'; ws?: string }>,
  chainId = 31337,
): Record<string, NetworkConfig> {
  return { 'eth-1': { chainId, upstreams: upstreams.map((u) => ({ kind: 'full' as const, ...u })) } }
}

export interface TestGateway {
  gateway: RunningGateway
  config: Config
  /** The config written to a file, for the command line. */
  configPath: string
  dataDir: string
  /** POST URL of a network. */
  url(network: string): string
  /** WebSocket URL of a network. */
  wsUrl(network: string): string
  /** A new account with a random wallet on `planId`, and its key. */
  createKey(planId: string, nodes?: Entitlement[]): Promise<{ apiKey: string; accountId: string; keyId: string }>
  /** A new key for the account; its old one stays live for `graceMs` (the account's keys then are two). */
  regenerateKey(accountId: string, graceMs: number): Promise<{ apiKey: string; keyId: string }>
  /** Set the restrictions of the account's active key (restrictKey); `replace`: the rules not given are lifted. */
  restrictKey(accountId: string, restrictions: unknown, replace?: boolean): Promise<KeyRestrictions>
  /** Register a public key the account's signed tokens are checked with (registerJwtKey). */
  registerJwtKey(accountId: string, key: { kid: string; alg: string; publicKey: unknown }): Promise<unknown>
  /** Stop the gateway (idempotent); the data folder stays until the test ends. */
  stop(): Promise<void>
}

export interface TestGatewayOptions {
  networks: Record<string, NetworkConfig>
  nats?: string
  /** JetStream stream name (default: a new one): gateways given the same one share their event log. */
  stream?: string
  catalog?: string
  limits?: Partial<LimitsConfig>
  /** WebSocket limits (config `ws`). */
  ws?: Partial<WsConfig>
  usageIntervalMs?: number
  /** Whether the gateway projects the fleet's usage (config `usage.project`, default true); false needs `nats`. */
  usageProject?: boolean
  clock?: Clock
  /** Reuse a data folder (a restart); default a new temporary one. */
  dataDir?: string
  /** Folder of the built dashboard to serve (default: dist/dashboard when built). */
  dashboardDir?: string
  /** More top-level config sections (payments, dashboard, publicUrl, heavy, cache, health, hedge, routing), merged over the rest. */
  config?: Record<string, unknown>
  /** The gateway's logger (default: silent, or LOG_LEVEL's), e.g. one writing to a stream the test reads. */
  logger?: Logger
  /**
   * Put the gateway's own node polls (health, finality) off beyond the test's life, so that the
   * node calls a test counts or holds are its own; `config.health` and `config.cache` still go over it.
   */
  quiet?: boolean
}

/** The node polls a quiet gateway puts off (10 minutes: longer than any test); config sections, for a gateway process too. */
export const QUIET_POLLS = { health: { pollMs: 600_000 }, cache: { finalityPollMs: 600_000 } }

/** Start a real gateway in this process on a free port, with its own data folder. */
export async function startTestGateway(t: { teardown(fn: () => unknown): void }, opts: TestGatewayOptions): Promise<TestGateway> {
  process.env.TOLLGATE_SECRET ??= TEST_SECRET
  const ownDir = opts.dataDir === undefined
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'tollgate-gw-')))
  const raw = {
    listen: { host: '127.0.0.1', port: 0 },
    // Several gateways run in one test process: each takes a free admin port.
    admin: { listen: { host: '127.0.0.1', port: 0 } },
    dataDir,
    events: opts.nats ? { nats: opts.nats, stream: opts.stream ?? `T${randomBytes(4).toString('hex')}` } : {},
    networks: opts.networks,
    plans: { catalog: opts.catalog ?? 'default' },
    limits: opts.limits ?? {},
    ws: opts.ws ?? {},
    usage: { intervalMs: opts.usageIntervalMs ?? 1000, ...(opts.usageProject === undefined ? {} : { project: opts.usageProject }) },
    ...opts.config,
    ...(opts.quiet ? quietOver(opts.config) : {}),
  }
  const config = parseConfig(raw, 'test')
  const configPath = join(dataDir, 'config.json')
  await writeFile(configPath, JSON.stringify(raw, null, 2))
  const logger = opts.logger ?? pino({ level: process.env.LOG_LEVEL ?? 'silent' })
  const gateway = await startGateway(config, { logger, clock: opts.clock, dashboardDir: opts.dashboardDir })
  const catalog = loadPlanCatalog(config.plans.catalog)
  const cipher = KeyCipher.fromSecret(process.env.TOLLGATE_SECRET)
  const commandDeps = { log: gateway.log, store: gateway.store, catalog, cipher, clock: opts.clock ?? systemClock, projector: gateway.projector }
  let stopped = false
  const stop = async (): Promise<void> => {
    if (stopped) return
    stopped = true
    await gateway.close()
  }
  t.teardown(async () => {
    await stop()
    if (ownDir) await rm(dataDir, { recursive: true, force: true, maxRetries: 5 })
  })
  return {
    gateway,
    config,
    configPath,
    dataDir,
    url: (network) => `${gateway.http}/http/${network}`,
    wsUrl: (network) => `${gateway.ws}/ws/${network}`,
    createKey: (planId, nodes) => createAccount(commandDeps, { wallet: `0x${randomBytes(20).toString('hex')}`, planId, nodes }),
    regenerateKey: (accountId, graceMs) => regenerateKey(commandDeps, { accountId, graceMs }),
    restrictKey: (accountId, restrictions, replace) => restrictKey(commandDeps, { accountId, restrictions, replace }),
    registerJwtKey: (accountId, key) => registerJwtKey(commandDeps, { accountId, ...key }),
    stop,
  }
}

/** The quiet polls with what the test's own `health` and `cache` sections say over them. */
function quietOver(config: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    health: { ...QUIET_POLLS.health, ...(config.health as object | undefined) },
    cache: { ...QUIET_POLLS.cache, ...(config.cache as object | undefined) },
  }
}

/** POST a JSON-RPC body (object or raw text) and return status, headers and the parsed body. */
export async function rpc(
  url: string,
  body: unknown,
  init: { apiKey?: string; bearer?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; text: string; json: any }> {
  const target = init.apiKey === undefined ? url : `${url}?apikey=${encodeURIComponent(init.apiKey)}`
  const headers: Record<string, string> = { 'content-type': 'application/json', ...init.headers }
  if (init.bearer !== undefined) headers.authorization = `Bearer ${init.bearer}`
  const res = await fetch(target, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) })
  const text = await res.text()
  let json: any
  try {
    json = text === '' ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, headers: res.headers, text, json }
}

const CHAIN_ID_CALL = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'

/**
 * One eth_chainId call with `apiKey`, for tests that count statuses over many calls (load, fleets,
 * workers): over `agent`'s connections (one agent per instance keeps its calls on it), or without
 * one on a connection of its own, closed after it (Linux hands each new connection to one of the
 * workers listening on a port). The status and the body read whole.
 * @example
 * const { status } = await chainIdCall(gw.url('eth-1'), apiKey, agent)
 */
export async function chainIdCall(url: string, apiKey: string, agent?: Dispatcher): Promise<{ status: number; body: string }> {
  const res = await request(`${url}?apikey=${encodeURIComponent(apiKey)}`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', ...(agent ? {} : { connection: 'close' }) },
    body: CHAIN_ID_CALL,
  })
  return { status: res.statusCode, body: await res.body.text() }
}
