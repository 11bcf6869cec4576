import t from 'tap'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startAnvil } from '../../harness/anvil.js'
import { startNats } from '../../harness/nats-server.js'
import { runCli, type CliResult } from '../helpers/cli.js'
import { TEST_SECRET } from '../helpers/gateway.js'
import { createAccountKey } from '../helpers/fleet.js'
import { startGatewayProcess, startWorkersGateway } from '../helpers/gateway-process.js'
import { CallLoop } from '../helpers/call-loop.js'

// The commands an operator scripts beside a fleet, run 8 at a time on the configs of two live
// instances that share one NATS stream (one of them a supervisor of two workers), while both
// project: each other's account events, the commands' own, and the usage of calls made all along.
// A command reads the log's end and the store's checkpoint while a gateway (or another command)
// moves the checkpoint on: none may fail for it, and each must exit (a run that does not is
// killed at RUN_MS and counted as hung).
t.setTimeout(900_000)
const RUNS = 40
const AT_A_TIME = 8
/** A command that has not exited by then hangs: one takes a few seconds here even under load. */
const RUN_MS = 120_000
const env = { TOLLGATE_SECRET: TEST_SECRET }

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const nats = await startNats()
t.teardown(() => nats.stop())
const stream = `C${randomBytes(4).toString('hex')}`
const config = {
  events: { nats: nats.url, stream },
  networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full' }] } },
  // The shortest interval the schema allows: the most usage events for the projectors to apply.
  usage: { intervalMs: 100 },
}
const [single, { gateway: supervised, port }] = await Promise.all([startGatewayProcess(t, { config }), startWorkersGateway(t, { workers: 2, config })])
const instances = [
  { name: 'instance', configPath: single.configPath, url: single.url('eth-1') },
  { name: 'supervisor of 2 workers', configPath: supervised.configPath, url: `http://127.0.0.1:${port}/http/eth-1` },
]
// An account per instance for the key commands, and calls on both all along: usage events keep
// both instances' projectors moving while the commands run.
const accounts = await Promise.all([createAccountKey(single, 'tier-3'), createAccountKey(supervised, 'tier-3')])
const loops = instances.map((instance, i) => new CallLoop(() => `${instance.url}?apikey=${accounts[i]!.apiKey}`, 2))
t.teardown(() => Promise.all(loops.map((loop) => loop.stop())))

/** The i-th command: accounts create most often (what an operator scripts), and the others in turn. */
function commandOf(i: number): { instance: string; args: string[] } {
  const at = i % 2
  const { configPath, name } = instances[at]!
  switch (i % 5) {
    case 0:
    case 1:
      return {
        instance: name,
        args: ['accounts', 'create', '--config', configPath, '--wallet', `0x${randomBytes(20).toString('hex')}`, '--plan', 'tier-1', '--nodes', 'eth-1:full'],
      }
    case 2:
      return { instance: name, args: ['keys', 'regenerate', '--config', configPath, '--account', accounts[at]!.accountId] }
    case 3:
      return { instance: name, args: ['usage', '--config', configPath, '--json'] }
    default:
      return { instance: name, args: ['events', '--config', configPath] }
  }
}

interface Run {
  instance: string
  args: string[]
  out?: CliResult
  /** Set when the command did not exit within RUN_MS. */
  hung?: string
}

const runs: Run[] = []
let next = 0
await Promise.all(
  Array.from({ length: AT_A_TIME }, async () => {
    while (next < RUNS) {
      const run: Run = commandOf(next++)
      runs.push(run)
      await runCli(run.args, env, RUN_MS).then(
        (out) => void (run.out = out),
        (err: Error) => void (run.hung = err.message),
      )
    }
  }),
)

t.test(`${RUNS} commands, ${AT_A_TIME} at a time beside two live instances: each exits, none fails`, async (t) => {
  const hung = runs.filter((r) => r.hung !== undefined)
  const failed = runs.filter((r) => r.out !== undefined && r.out.code !== 0)
  const describe = (r: Run) => `${r.args.slice(0, 2).join(' ')} on the ${r.instance}: ${r.hung ?? `exit ${r.out!.code}: ${r.out!.stderr.trim().slice(-400)}`}`
  t.equal(runs.length, RUNS)
  t.same(hung.map(describe), [], 'every command exited')
  t.same(failed.map(describe), [], 'every command succeeded')
  for (const r of runs) {
    if (r.args[0] === 'accounts' || r.args[0] === 'keys')
      t.match(r.out?.last, { accountId: /^acc_/, apiKey: /^tg_/ }, `${r.args[0]} ${r.args[1]} printed its key`)
  }
})

t.test('calls went on while the commands ran', async (t) => {
  for (const [i, loop] of loops.entries()) t.ok(loop.counts.served > 0, `${instances[i]!.name}: ${loop.counts.served} calls served`)
})

t.test('replay on a live data folder is refused with its message and exits; on a folder of its own it rebuilds the stream', async (t) => {
  const refused = await Promise.all(instances.map((instance) => runCli(['replay', '--config', instance.configPath], env, RUN_MS)))
  for (const [i, out] of refused.entries()) {
    t.equal(out.code, 1, `${instances[i]!.name}: exit 1`)
    t.match(out.stderr, /gateway/, `${instances[i]!.name}: says a gateway holds the folder: ${out.stderr.trim()}`)
  }
  const dataDir = await mkdtemp(join(tmpdir(), 'tollgate-replay-beside-'))
  t.teardown(() => rm(dataDir, { recursive: true, force: true }))
  const configPath = join(dataDir, 'config.json')
  await writeFile(configPath, JSON.stringify({ ...config, dataDir }))
  const out = await runCli(['replay', '--config', configPath], env, RUN_MS)
  t.equal(out.code, 0, out.stderr)
  t.ok(out.last?.events > 0, `replayed ${out.last?.events} events of the live stream`)
})
