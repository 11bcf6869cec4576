import t from 'tap'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runCli } from '../helpers/cli.js'
import { TEST_SECRET } from '../helpers/gateway.js'
import { openLedger } from '../helpers/ledger.js'
import { accountFor } from '../helpers/payments.js'
import { requestPrivateNode } from '../../src/accounts/private-node.js'
import { EmbeddedLog } from '../../src/events/embedded-log.js'

/* A Private Node: the owner's request is recorded; the operator attaches a node from the command line. */
const dir = await mkdtemp(join(tmpdir(), 'tollgate-private-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))
const configPath = join(dir, 'config.json')
await writeFile(configPath, JSON.stringify({ dataDir: dir, networks: { 'eth-1': { chainId: 1, upstreams: [{ url: 'http://127.0.0.1:9', kind: 'full' }] } } }))

t.test('the request is recorded and the operator attaches a dedicated node', async (t) => {
  const log = EmbeddedLog.open(join(dir, 'log'))
  const ledger = await openLedger(t, { log })
  const wallet = '0x00000000000000000000000000000000000000aa'
  const accountId = await accountFor(ledger, wallet)
  await requestPrivateNode(ledger, { accountId, nodes: [{ network: 'eth-1', kind: 'full' }], available: [{ network: 'eth-1', kind: 'full' }] })
  t.same(ledger.store.privateNode(accountId)?.requested, [{ network: 'eth-1', kind: 'full' }])
  await log.close()

  const out = await runCli(
    ['nodes', 'attach', '--config', configPath, '--account', accountId, '--network', 'eth-1', '--url', 'http://10.1.2.3:8545', '--ws', 'ws://10.1.2.3:8546'],
    { TOLLGATE_SECRET: TEST_SECRET },
  )
  t.equal(out.code, 0, out.stderr)
  t.same(out.last, { accountId, network: 'eth-1', kind: 'full', url: 'http://10.1.2.3:8545', ws: 'ws://10.1.2.3:8546' })
  const reread = EmbeddedLog.open(join(dir, 'log'))
  const types = (await reread.read(1, 100)).map((s) => s.event.type)
  await reread.close()
  t.same(types, ['AccountCreated', 'PrivateNodeRequested', 'DedicatedNodeAttached'])

  const bad = await runCli(['nodes', 'attach', '--config', configPath, '--account', accountId, '--network', 'eth-9', '--url', 'http://x:1'])
  t.equal(bad.code, 2, 'an unknown network is a usage mistake')
  t.match(bad.stderr, /eth-9/)
})
