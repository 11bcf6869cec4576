import t from 'tap'
import { randomBytes } from 'node:crypto'
import { startAnvil } from '../../harness/anvil.js'
import { begun, runCli } from '../helpers/cli.js'
import { TEST_SECRET } from '../helpers/gateway.js'
import { refusedStart, startGatewayProcess } from '../helpers/gateway-process.js'
import { lockDataDir } from '../../src/main/data-dir-lock.js'

// `tollgate replay` rebuilt the projections of a data folder a live gateway was serving from,
// without a word. A data folder belongs to one gateway, or one replay, at a time: replay refuses
// a folder a live gateway holds, naming its pid; a second gateway on the folder is refused too;
// and a gateway that was killed (SIGKILL, no chance to clean up) leaves nothing that blocks.

t.setTimeout(240_000)
const env = { TOLLGATE_SECRET: TEST_SECRET }
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const networks = { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full' }] } }

const gateway = await startGatewayProcess(t, { config: { networks } })
const created = await runCli(
  ['accounts', 'create', '--config', gateway.configPath, '--wallet', `0x${randomBytes(20).toString('hex')}`, '--plan', 'tier-3'],
  env,
)
if (created.code !== 0) throw new Error(`accounts create failed: ${created.stderr}`)
// The first two tests meet the live gateway's lock, and neither the refused replay nor the refused
// gateway changes the folder: both begin now, together, and each test checks its own. The last two
// need the gateway killed (a fresh start on its folder, and a process killed on it): they run after.
const replayRun = begun(runCli(['replay', '--config', gateway.configPath], env))
const secondStart = refusedStart(t, { config: { networks, dataDir: gateway.dataDir } })

t.test('replay refuses the data folder of a live gateway, naming its pid', async (t) => {
  const out = await replayRun
  t.equal(out.code, 1, 'exit code 1')
  t.equal(out.stdout, '', 'nothing replayed')
  t.match(out.stderr, new RegExp(`DataDirInUseError: the data folder \\S+ is in use by a gateway \\(pid ${gateway.pid}, running since [0-9T:.-]+Z\\)`))
  t.match(out.stderr, /Stop it first \(SIGTERM or Ctrl-C\), then run the replay again/, 'and says what to do')
})

t.test('a second gateway on the same data folder is refused', async (t) => {
  const second = await secondStart
  t.match(second, /the gateway exited \(1\)/, 'it does not start')
  t.match(second, new RegExp(`the data folder \\S+ \\("dataDir" in the config\\) is in use by a gateway \\(pid ${gateway.pid},`))
})

t.test('a gateway does not start on a folder a replay holds', async (t) => {
  await gateway.kill()
  // This test process holds the folder as a replay does (the same lock, for the time of the check).
  const lock = await lockDataDir(gateway.dataDir, 'replay', 'tollgate replay')
  t.teardown(() => lock.release())
  const refused = await refusedStart(t, { config: { networks, dataDir: gateway.dataDir } })
  t.match(refused, new RegExp(`is in use by tollgate replay \\(pid ${process.pid},`))
})

t.test('a gateway killed with SIGKILL leaves no lock behind: replay runs', async (t) => {
  const again = await startGatewayProcess(t, { config: { networks, dataDir: gateway.dataDir } })
  await again.kill()
  const out = await runCli(['replay', '--config', gateway.configPath], env)
  t.equal(out.code, 0, out.stderr)
  t.ok(out.last.events > 0, `${out.last.events} events replayed`)
  t.match(out.last.digest, /^[0-9a-f]{64}$/)
})
