import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { join, resolve } from 'node:path'
import { parseCommandArgs } from '../args.js'
import { UsageError } from '../errors.js'
import { parseConfig } from '../../config/load.js'
import { startGateway } from '../../main/start-gateway.js'
import { makeLogger } from '../logger.js'
import { runUntilSignal, stopSignal } from '../run-until-signal.js'
import { holdReloadsWhileStarting, onReloadSignal } from '../reload-on-signal.js'
import { freeLocalPort, startDevnet } from '../../dev/devnet.js'
import { DEVNET_KEYS, deployTestUsd, TEST_USD_DECIMALS, TEST_USD_EACH } from '../../dev/test-usd.js'
import { privateKeyToAccount } from 'viem/accounts'
import { findNatsServer, startLocalNatsCluster } from '../../dev/nats-cluster.js'
import { startFleetNginx } from '../../dev/nginx.js'
import type { Config } from '../../config/types.js'
import { openContextFor } from '../context.js'
import { createAccount, showKey } from '../../accounts/commands.js'
import { KeyCipher } from '../../keys/key-cipher.js'
import { systemClock } from '../../../actors/runtime/clock.js'

/** Anvil's first dev account: the demo account's wallet. */
const DEMO_WALLET = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266'

/**
 * `tollgate dev [--port N] [--admin-port N] [--data DIR]`: a first try on a fresh machine. Starts a local anvil
 * devnet as the `dev-1` network (serving as its full and its archive node), uses the embedded
 * event log, creates a demo account on Tier 3 (or shows its key again on later runs), and prints
 * the endpoint, the key and a curl line that works. Paid plans are paid in a test USD token
 * deployed on the devnet (src/dev/test-usd.ts); the banner says how to pay from a browser wallet.
 */
export async function devCommand(args: string[]): Promise<void> {
  const v = parseCommandArgs('dev', args, {
    port: { type: 'string' },
    'admin-port': { type: 'string' },
    data: { type: 'string' },
    host: { type: 'string' },
    fleet: { type: 'boolean' },
  })
  if (v.fleet) return devFleet(v)
  const port = portArg('--port', v.port, 8080)
  // --port 0 (any free port, as the tests run it) takes any free admin port too.
  const adminPort = portArg('--admin-port', v['admin-port'], port === 0 ? 0 : 9090)
  const dataDir = resolve(v.data ?? './data/dev')
  mkdirSync(dataDir, { recursive: true })
  const secret = devSecret(dataDir)
  const logger = makeLogger('stdout')
  const starting = holdReloadsWhileStarting(logger)

  const devnet = await startDevnet()
  let usd: Awaited<ReturnType<typeof deployTestUsd>>
  try {
    // First on the fresh devnet: the token then has the same address on every run.
    usd = await deployTestUsd(devnet)
  } catch (err) {
    await devnet.stop()
    throw err
  }
  const raw = {
    listen: { host: v.host ?? '127.0.0.1', port },
    admin: { listen: { host: '127.0.0.1', port: adminPort } },
    dataDir,
    networks: devNetworks(devnet),
    // One confirmation: anvil mines a block per transaction and none otherwise, so a payment
    // waiting for more would wait until the next transaction of anyone.
    payments: { network: 'dev-1', token: usd.token, treasury: usd.treasury, confirmations: 1 },
  }
  const config = parseConfig(raw, 'tollgate dev (embedded defaults)')
  // Written out so that the other commands (events, accounts, keys, replay) can be tried on the dev data.
  const configPath = join(dataDir, 'config.json')
  writeFileSync(configPath, JSON.stringify(raw, null, 2) + '\n')
  const apiKey = await demoKey(config, secret)

  // Before the gateway says it is ready (see stopSignal); a Ctrl-C before this point stops all at once.
  const stopping = stopSignal(logger)
  let gateway: Awaited<ReturnType<typeof startGateway>>
  try {
    gateway = await startGateway(config, { logger, secret })
  } catch (err) {
    await devnet.stop()
    throw err
  }
  // The written config can be edited and applied as with `start` (tollgate reload, SIGHUP).
  starting()
  onReloadSignal(logger, configPath, (next) => gateway.reload(next))
  const endpoint = `${gateway.http}/http/dev-1`
  process.stdout.write(
    [
      '',
      'Tollgate is running (dev mode: a local anvil devnet, the embedded event log in ' + dataDir + ').',
      `  HTTP endpoint: ${endpoint}`,
      `  API key (demo account on Tier 3): ${apiKey}`,
      '',
      'Try it:',
      `  curl -s ${endpoint} -H 'Content-Type: application/json' -H 'Authorization: Bearer ${apiKey}' -d '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}'`,
      '',
      `Dashboard: ${gateway.http}/  (paid plans are paid in the devnet's test USD: see below)`,
      ...browserWalletLines(devnet, usd.token),
      `Metrics: ${gateway.admin}/metrics  (the admin listener)`,
      `Events:  node bin/tollgate.js events --config ${configPath}`,
      'Stop:    Ctrl-C',
      '',
    ].join('\n') + '\n',
  )
  await runUntilSignal(
    logger,
    async () => {
      await gateway.close()
      await devnet.stop()
    },
    config.shutdownMs,
    stopping,
  )
}

/**
 * How to try the dashboard's flow (connect, sign in, pay a plan) from a browser wallet: the
 * devnet's RPC URL and chain id to add as a network, and a dev account's key to import. Not the
 * first account: it is the demo account's wallet, on Tier 3 already.
 */
function browserWalletLines(devnet: { url: string; chainId: number }, token: string): string[] {
  const key = DEVNET_KEYS[1]
  const address = privateKeyToAccount(key).address
  return [
    `  To pay from a browser wallet: add the network RPC URL ${devnet.url}, chain id ${devnet.chainId};`,
    `  import the devnet account ${address} (private key ${key}: a public test key, never use it elsewhere),`,
    `  which holds 10,000 ETH and ${TEST_USD_EACH.toLocaleString('en-US')} TUSD (test USD, ${TEST_USD_DECIMALS} decimals, token ${token});`,
    '  connect it on the dashboard, choose Tier 1 and pay: the plan starts at one confirmation.',
  ]
}

/** The key of the demo account (made on the first run, shown again later), through the config's event log. */
async function demoKey(config: Config, secret: string): Promise<string> {
  const cipher = KeyCipher.fromSecret(secret)
  const ctx = await openContextFor(config)
  try {
    const deps = { log: ctx.log, store: ctx.store, catalog: ctx.catalog, cipher, clock: systemClock, projector: ctx.projector }
    const existing = ctx.store.accountByWallet(DEMO_WALLET)
    return existing?.activeKeyId ? showKey(deps, existing.accountId) : (await createAccount(deps, { wallet: DEMO_WALLET, planId: 'tier-3' })).apiKey
  } finally {
    await ctx.close()
  }
}

/**
 * `tollgate dev --fleet`: the fleet of "Running a fleet" on one machine, to see it work before
 * deploying one. A 3-node NATS cluster (the stream at 3 replicas), 3 gateways in this process,
 * each its own instance with its own data folder, and nginx in front on --port with the config of
 * docs/fleet.md. Needs Debian's nats-server and nginx-light.
 */
async function devFleet(v: { port?: string; data?: string; host?: string }): Promise<void> {
  const port = portArg('--port', v.port, 8080)
  const dataDir = resolve(v.data ?? './data/dev-fleet')
  mkdirSync(dataDir, { recursive: true })
  const secret = devSecret(dataDir)
  const logger = makeLogger('stdout')
  const stops: (() => Promise<void>)[] = []
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.reverse()) await stop().catch((err: unknown) => logger.warn({ err: String(err) }, 'stopping a part of the dev fleet failed'))
  }
  try {
    const nats = await startLocalNatsCluster(requireNatsServer(), join(dataDir, 'nats'), 3)
    stops.push(() => nats.stop())
    const devnet = await startDevnet()
    stops.push(() => devnet.stop())
    const rawOf = async (i: number) => ({
      listen: { host: '127.0.0.1', port: await freeLocalPort() },
      admin: { listen: { host: '127.0.0.1', port: await freeLocalPort() } },
      dataDir: join(dataDir, `gateway-${i + 1}`),
      trustProxy: true,
      events: { nats: nats.urls, stream: 'TOLLGATE', replicas: 3 },
      networks: devNetworks(devnet),
    })
    const raws = await Promise.all([0, 1, 2].map(rawOf))
    const configs = raws.map((raw, i) => parseConfig(raw, `tollgate dev --fleet (gateway ${i + 1})`))
    const configPath = join(dataDir, 'config.json')
    writeFileSync(configPath, JSON.stringify(raws[0], null, 2) + '\n')
    // The cluster elects its JetStream leader within seconds of starting: until then the stream
    // cannot be made, and the demo account waits.
    const apiKey = await retryFor(30_000, () => demoKey(configs[0]!, secret))
    const gateways = []
    for (const config of configs) {
      const gateway = await startGateway(config, { logger: logger.child({ gateway: gateways.length + 1 }), secret })
      stops.push(() => gateway.close())
      gateways.push(gateway)
    }
    const listen = `${v.host ?? '127.0.0.1'}:${port}`
    const nginx = await startFleetNginx(
      join(dataDir, 'nginx'),
      listen,
      gateways.map((g) => g.http.replace(/^http:\/\//, '')),
    )
    stops.push(() => nginx.stop())
    const endpoint = `http://${listen}/http/dev-1`
    process.stdout.write(
      [
        '',
        'A Tollgate fleet is running: 3 NATS servers in a cluster, 3 gateways, nginx in front (data in ' + dataDir + ').',
        `  HTTP endpoint (nginx): ${endpoint}`,
        `  API key (demo account on Tier 3): ${apiKey}`,
        ...gateways.map((g, i) => `  gateway ${i + 1}: ${g.http}  metrics ${g.admin}/metrics`),
        '',
        'Try it:',
        `  curl -s ${endpoint} -H 'Content-Type: application/json' -H 'Authorization: Bearer ${apiKey}' -d '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}'`,
        `  node bin/tollgate.js fleet --config ${configPath}`,
        'Stop:    Ctrl-C',
        '',
      ].join('\n') + '\n',
    )
  } catch (err) {
    await stopAll()
    throw err
  }
  await runUntilSignal(logger, stopAll, 10_000)
}

function requireNatsServer(): string {
  const binary = findNatsServer()
  if (binary === undefined)
    throw new UsageError('tollgate dev --fleet runs a NATS cluster: install nats-server first (apt-get install nats-server nginx-light)')
  return binary
}

async function retryFor<T>(withinMs: number, attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + withinMs
  for (;;) {
    try {
      return await attempt()
    } catch (err) {
      if (Date.now() > deadline) throw err
      await new Promise((r) => setTimeout(r, 500))
    }
  }
}

/** The `dev-1` network: the local anvil, serving as its full and its archive node. */
function devNetworks(devnet: { chainId: number; url: string; ws: string }) {
  return {
    'dev-1': {
      chainId: devnet.chainId,
      upstreams: [
        { url: devnet.url, ws: devnet.ws, kind: 'full' },
        { url: devnet.url, ws: devnet.ws, kind: 'archive' },
      ],
    },
  }
}

function portArg(name: string, value: string | undefined, fallback: number): number {
  const port = value === undefined ? fallback : Number(value)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`tollgate dev: ${name} must be a port number, got ${JSON.stringify(value)}`)
  return port
}

/** The dev secret lives in the data folder (0600), generated on first run; `start` never does this. */
function devSecret(dataDir: string): string {
  if (process.env.TOLLGATE_SECRET) return process.env.TOLLGATE_SECRET
  const file = join(dataDir, 'secret')
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  const secret = randomBytes(32).toString('hex')
  writeFileSync(file, secret + '\n', { mode: 0o600 })
  return secret
}
