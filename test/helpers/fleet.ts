import { randomBytes } from 'node:crypto'
import { startGatewayProcess, type GatewayProcess } from './gateway-process.js'
import { runCli } from './cli.js'
import { TEST_SECRET } from './gateway.js'
import { within } from './eventually.js'

/**
 * Several `tollgate start` processes on one NATS stream, started together: a fleet, as an operator
 * runs one. Each has its own data folder and ports; `config` is merged into each one's config.
 * `natsUrlOf` gives an instance another way to the same NATS (a link the test can cut).
 * @example
 * const { gateways } = await startFleet(t, { instances: 3, natsUrl: nats.url, nodeUrl: anvil.url, natsUrlOf: (i) => (i === 2 ? link.url : nats.url) })
 */
export async function startFleet(
  t: { teardown(fn: () => unknown): void },
  opts: {
    instances: number
    natsUrl: string | string[]
    natsUrlOf?: (instance: number) => string | string[]
    nodeUrl: string
    config?: Record<string, unknown>
    events?: Record<string, unknown>
  },
): Promise<{ gateways: GatewayProcess[]; stream: string }> {
  const stream = `F${randomBytes(4).toString('hex')}`
  const gateways = await Promise.all(
    Array.from({ length: opts.instances }, (_, i) =>
      startGatewayProcess(t, {
        config: {
          events: { nats: opts.natsUrlOf?.(i) ?? opts.natsUrl, stream, ...opts.events },
          networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: opts.nodeUrl, kind: 'full' }] } },
          ...opts.config,
        },
      }),
    ),
  )
  return { gateways, stream }
}

/**
 * A new account on `plan` made through the command line of `gateway`'s config; its key, and the
 * key's id as the command prints it (the id of its KeyIssued event: no `tollgate events` run needed).
 */
export async function createAccountKey(
  gateway: GatewayProcess,
  plan: string,
  catalogNodes = 'eth-1:full',
): Promise<{ apiKey: string; accountId: string; keyId: string }> {
  const wallet = `0x${randomBytes(20).toString('hex')}`
  const out = await runCli(['accounts', 'create', '--config', gateway.configPath, '--wallet', wallet, '--plan', plan, '--nodes', catalogNodes], {
    TOLLGATE_SECRET: TEST_SECRET,
  })
  if (out.code !== 0) throw new Error(`accounts create failed: ${out.stderr}`)
  return { apiKey: out.last.apiKey, accountId: out.last.accountId, keyId: out.last.keyId }
}

/**
 * Every event of the stream (or embedded log) of `configPath`, as `tollgate events` prints them,
 * parsed; throws with its stderr unless the command exits with 0. With `retryWithinMs`, a failed
 * run is asked again until one succeeds or that bound passes, as an operator would: a replicated
 * stream still electing its leader after a node's restart makes the command fail, for as long as
 * the election takes (a fixed 4 tries a second apart were once too few on a loaded machine).
 */
export async function eventsOf(configPath: string, retryWithinMs = 0): Promise<Array<Record<string, any>>> {
  const run = () => runCli(['events', '--config', configPath], { TOLLGATE_SECRET: TEST_SECRET })
  let out = await run()
  let attempts = 1
  if (out.code !== 0 && retryWithinMs > 0) {
    await within(
      retryWithinMs,
      async () => {
        attempts++
        out = await run()
        return out.code === 0
      },
      500,
    )
  }
  if (out.code !== 0) throw new Error(`tollgate events failed ${attempts} time(s) (exit ${out.code}): ${out.stderr.slice(-2000)}`)
  return out.stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l))
}

/** The value of an unlabelled metric on a gateway's admin listener. */
export async function metricValue(gateway: GatewayProcess, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${gateway.admin}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return line === undefined ? undefined : Number(line.slice(name.length + 1))
}
