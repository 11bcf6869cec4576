import t from 'tap'
import { createServer } from 'node:net'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../harness/free-port.js'
import { runCli } from '../helpers/cli.js'
import { TEST_SECRET } from '../helpers/gateway.js'

// A `tollgate start` that cannot start must exit, non-zero and with its error, while NATS cannot be
// reached: an operator's supervisor (systemd, podman) restarts only a process that ended. One
// printed its error and ran on (11 minutes after a SIGTERM): the fleet's bus went on attempting
// its first connection to NATS after the failed start had closed it.
t.setTimeout(240_000)
/** A start that has not exited by then hangs: a refused one takes a few seconds here even under load. */
const RUN_MS = 60_000

const dataDir = await mkdtemp(join(tmpdir(), 'tollgate-start-error-'))
t.teardown(() => rm(dataDir, { recursive: true, force: true }))
// A port nobody listens on: NATS is away, and the client retries in the background.
const nats = `nats://127.0.0.1:${await freePort()}`
const networks = { 'eth-1': { chainId: 31337, upstreams: [{ url: 'http://127.0.0.1:1', kind: 'full' }] } }

async function configFile(name: string, listenPort: number): Promise<string> {
  const path = join(dataDir, `${name}.json`)
  const config = {
    dataDir: join(dataDir, name),
    listen: { host: '127.0.0.1', port: listenPort },
    admin: { listen: { host: '127.0.0.1', port: 0 } },
    events: { nats, stream: `SE${name}` },
    networks,
  }
  await writeFile(path, JSON.stringify(config))
  return path
}

t.test('a secret too short: it exits 1 with WeakSecretError', async (t) => {
  const path = await configFile('weak', 0)
  const out = await runCli(['start', '--config', path], { TOLLGATE_SECRET: 'too-short' }, RUN_MS).catch((err: Error) => err)
  if (out instanceof Error) return t.fail(`it did not exit: ${out.message}`)
  t.equal(out.code, 1)
  t.match(out.stderr, /WeakSecretError: TOLLGATE_SECRET is 9 characters long/)
})

t.test('the RPC port in use: it exits 1 with PortUnavailableError', async (t) => {
  const taken = createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => taken.close(resolve)))
  const port = (taken.address() as { port: number }).port
  const path = await configFile('port', port)
  const out = await runCli(['start', '--config', path], { TOLLGATE_SECRET: TEST_SECRET }, RUN_MS).catch((err: Error) => err)
  if (out instanceof Error) return t.fail(`it did not exit: ${out.message}`)
  t.equal(out.code, 1)
  t.match(out.stderr, new RegExp(`PortUnavailableError: .*${port}`))
})
