/**
 * The gateway as a benchmark target, in its own process: a generated config (one network whose
 * node is the stub), the embedded event log in a fresh data folder, a key created with the same
 * account command the CLI runs, then `startGateway` exactly as `tollgate start` calls it.
 *
 * `srcRoot` lets the harness run another commit's code (`--baseline REF`: `git archive` of that
 * commit into a temporary folder) beside this one in the same run, for before/after ratios.
 *
 * Run: `node --import tsx bench/targets/gateway-entry.ts '<json GatewayTargetOptions>'`; prints
 * `{"ready":true,"port":N,"apiKey":"…"}`. SIGTERM closes the gateway and exits 0, so that
 * `--cpu-prof` writes its profile.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { randomBytes } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import { answerControlCommands } from './control.js'

export interface GatewayTargetOptions {
  /** Folder holding src/ and actors/, as sources or compiled by tsc (default: this checkout's sources). */
  srcRoot?: string
  stubHttp: string
  /** The stub's WebSocket URL; absent: the node is reached over HTTP only. */
  stubWs?: string
  /** false: no usage metering (the "events cost" ratio). */
  meterUsage?: boolean
  port?: number
  /** Plan catalog file (bench/targets/bench-plans.json). */
  catalog: string
  /** Several nodes in place of the one stub (bench/upstream-scenarios.ts): each a stub's URL and a name. */
  nodes?: Array<{ http: string; ws?: string; name: string; maxInFlight?: number }>
  /** Accounts to create (default 1): their keys are printed as `apiKeys`, the first also as `apiKey`. */
  accounts?: number
  /** networks.eth-1.consensus, as the config has it. */
  consensus?: { participants: number; agreement: number }
}

const opts = JSON.parse(process.argv[2] ?? '{}') as GatewayTargetOptions
const root = resolve(opts.srcRoot ?? join(import.meta.dirname, '..', '..'))
// A folder compiled by tsc (as `tollgate start` runs, from dist/) holds .js where a checkout holds .ts.
const compiled = existsSync(join(root, 'src', 'config', 'load.js'))
/** A source file of `root` by its .ts path: its .js in a compiled folder. */
const file = (path: string): string => join(root, compiled ? path.replace(/\.ts$/, '.js') : path)
const load = <T>(path: string): Promise<T> => import(pathToFileURL(file(path)).href) as Promise<T>

type GatewayModule = typeof import('../../src/main/start-gateway.js')
type ConfigModule = typeof import('../../src/config/load.js')
type AccountsModule = typeof import('../../src/accounts/commands.js')
type CipherModule = typeof import('../../src/keys/key-cipher.js')
type CatalogModule = typeof import('../../src/plans/catalog.js')
type ClockModule = typeof import('../../actors/runtime/clock.js')
type ConfigSchemaModule = typeof import('../../schemas/config.js')

const [{ startGateway }, { parseConfig }, { createAccount }, { KeyCipher }, { loadPlanCatalog }, { systemClock }, { configSchema }] = await Promise.all([
  // The composition root moved to src/main/ after 3889d7d; a baseline commit may have it in src/gateway/.
  load<GatewayModule>(existsSync(file('src/main/start-gateway.ts')) ? 'src/main/start-gateway.ts' : 'src/gateway/gateway.ts'),
  load<ConfigModule>('src/config/load.ts'),
  load<AccountsModule>('src/accounts/commands.ts'),
  load<CipherModule>('src/keys/key-cipher.ts'),
  load<CatalogModule>('src/plans/catalog.ts'),
  load<ClockModule>('actors/runtime/clock.ts'),
  load<ConfigSchemaModule>('schemas/config.ts'),
])
// Several gateways run at once (and each takes any free admin port); a baseline commit from before
// the admin listener has no `admin` in its config schema and refuses the field.
const hasAdmin = (configSchema.properties as Record<string, unknown>).admin !== undefined
const { default: pino } = await import('pino')

const secret = randomBytes(32).toString('hex')
process.env.TOLLGATE_SECRET = secret
const dataDir = await mkdtemp(join(tmpdir(), 'tollgate-bench-gw-'))
const config = parseConfig(
  {
    listen: { host: '127.0.0.1', port: opts.port ?? 0 },
    ...(hasAdmin ? { admin: { listen: { host: '127.0.0.1', port: 0 } } } : {}),
    dataDir,
    networks: {
      'eth-1': {
        chainId: 1,
        upstreams: (opts.nodes ?? [{ http: opts.stubHttp, ws: opts.stubWs, name: 'stub' }]).map((n) => ({
          url: n.http,
          ...(n.ws ? { ws: n.ws } : {}),
          kind: 'full',
          name: n.name,
          ...('maxInFlight' in n && n.maxInFlight !== undefined ? { maxInFlight: n.maxInFlight } : {}),
        })),
        ...(opts.consensus ? { consensus: opts.consensus } : {}),
      },
    },
    plans: { catalog: opts.catalog },
    // The load opens its 16 sockets at once: above the spec's 15 new connections per second,
    // which would start the key's cooldown, and far above 500 messages per second (the limits are
    // tested in test/ws; here they are counted, never reached).
    ws: { newConnectionsPerSecond: 1000, maxConnectionsPerKey: 1000, messagesPerSecond: 10_000_000 },
  },
  'bench',
)
const gateway = await startGateway(config, { logger: pino({ level: 'warn' }), meterUsage: opts.meterUsage })
const catalog = loadPlanCatalog(config.plans.catalog)
const apiKeys: string[] = []
for (let i = 0; i < (opts.accounts ?? 1); i++) {
  const account = await createAccount(
    { log: gateway.log, store: gateway.store, catalog, cipher: KeyCipher.fromSecret(secret), clock: systemClock, projector: gateway.projector },
    { wallet: `0x${randomBytes(20).toString('hex')}`, planId: 'bench' },
  )
  apiKeys.push(account.apiKey)
}
process.stdout.write(JSON.stringify({ ready: true, port: gateway.port, apiKey: apiKeys[0], apiKeys }) + '\n')
answerControlCommands()

let stopping = false
const stop = async (): Promise<void> => {
  if (stopping) return
  stopping = true
  await gateway.close()
  await rm(dataDir, { recursive: true, force: true })
  process.exit(0)
}
process.on('SIGTERM', () => void stop())
process.on('SIGINT', () => void stop())
