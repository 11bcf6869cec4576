import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { builtMain } from '../helpers/built.js'

// Ctrl-C on `npm start` (`tollgate dev`): a terminal sends SIGINT to the whole foreground process
// group, so the devnet's anvil dies of it too, before the gateway's stop asks it to. The stop must
// still end with "stopped" and exit code 0. It waited for anvil's exit, which had happened: with
// nothing left to keep it alive the process ended quietly after "draining", never saying "stopped".

const MAIN = await builtMain()
const dataDir = await mkdtemp(join(tmpdir(), 'tollgate-dev-ctrl-c-'))
t.teardown(() => rm(dataDir, { recursive: true, force: true }))

/**
 * The environment of a shell, without what tap adds for its own children: its NODE_OPTIONS loads
 * a process-info hook into every node process, anvil's wrapper included, and under that hook the
 * wrapper ends with an exit code instead of dying of the signal, which hid the hang.
 */
function terminalEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_OPTIONS' && !/^_?TAP/.test(name)))
}

t.test('Ctrl-C (SIGINT to the process group) ends tollgate dev with "stopped"', async (t) => {
  // A process group of its own, as a shell gives a foreground job: the group is what Ctrl-C signals.
  const child = spawn(process.execPath, [MAIN, 'dev', '--port', '0', '--data', dataDir], {
    env: { ...terminalEnv(), TOLLGATE_SECRET: '', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  const group = child.pid!
  t.teardown(() => {
    // Whatever is left of the group this test started (the gateway, its anvil), by its id.
    try {
      process.kill(-group, 'SIGKILL')
    } catch {
      // already gone
    }
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr.on('data', (d: Buffer) => (err += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const started = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 60_000)
    child.stdout.on('data', () => {
      if (/Stop:\s+Ctrl-C/.test(out)) {
        clearTimeout(timer)
        resolve(true)
      }
    })
    void exited.then(() => resolve(false))
  })
  t.ok(started, `tollgate dev printed its banner; stderr: ${err.slice(-1000)}`)

  process.kill(-group, 'SIGINT')
  // Bounded by the stop's own limit: shutdownMs (10 s) plus the 5 s grace before a forced exit.
  let timer: NodeJS.Timeout | undefined
  const code = await Promise.race([exited, new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), 30_000)))])
  clearTimeout(timer)
  const lines = out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg: string })
  t.equal(code, 0, `exit code 0; stderr: ${err.slice(-1000)}`)
  t.ok(
    lines.some((l) => l.msg === 'shutting down'),
    'the signal was taken',
  )
  t.equal(lines.at(-1)?.msg, 'stopped', 'the last line says stopped')
  t.notOk(
    lines.some((l) => /did not end in time/.test(l.msg)),
    'not the forced exit',
  )
})
