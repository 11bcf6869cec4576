import t from 'tap'
import { createServer, type Server } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { startAnvil } from '../../harness/anvil.js'
import { startNats } from '../../harness/nats-server.js'
import { freePort } from '../../harness/free-port.js'
import { connectionsTo, filesHeldUnder } from '../helpers/own-resources.js'
import { parseConfig } from '../../src/config/load.js'
import { startGateway } from '../../src/main/start-gateway.js'

// A start whose last step fails (the admin port is taken) must leave nothing open: not the RPC
// port it had bound, not the LMDB environments (state, outbox, cache), not the NATS connection.
// The same probes first see all three held by a gateway that started, so they can fail.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const nats = await startNats()
t.teardown(() => nats.stop())
const logger = pino({ level: 'silent' })

async function configOn(adminPort: number) {
  const dataDir = await mkdtemp(join(tmpdir(), 'tollgate-failed-start-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const port = await freePort()
  const config = parseConfig({
    listen: { host: '127.0.0.1', port },
    admin: { listen: { host: '127.0.0.1', port: adminPort } },
    dataDir,
    events: { nats: nats.url, stream: `FS${port}` },
    networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full' }] } },
  })
  return { config, dataDir, port }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server: Server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

t.test('the probes see what a started gateway holds', async (t) => {
  const { config, dataDir, port } = await configOn(0)
  const gateway = await startGateway(config, { logger })
  t.equal(await canListen(port), false, 'its port is bound')
  t.ok(
    filesHeldUnder(dataDir).some((f) => f.endsWith('.mdb')),
    'its LMDB files are open',
  )
  t.ok(connectionsTo(nats.port) >= 1, 'it is connected to NATS')
  await gateway.close()
  t.same(filesHeldUnder(dataDir), [], 'closed: no file of its data folder is held')
  t.equal(connectionsTo(nats.port), 0, 'closed: no NATS connection')
  t.equal(await canListen(port), true, 'closed: its port is free')
})

t.test('a start that fails at its last step closes what it opened', async (t) => {
  const taken = createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => taken.close(resolve)))
  const adminPort = (taken.address() as { port: number }).port
  const { config, dataDir, port } = await configOn(adminPort)
  await t.rejects(startGateway(config, { logger }), /admin\.listen/, 'the error names the config field')
  t.equal(await canListen(port), true, 'the RPC port it had bound is free again')
  t.same(filesHeldUnder(dataDir), [], 'no LMDB environment of its data folder is left open')
  t.equal(connectionsTo(nats.port), 0, 'no NATS connection is left open')
})
