import t from 'tap'
import { spawn } from 'node:child_process'
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startAnvil } from '../../harness/anvil.js'
import { LOCK_FILE, lockDataDir } from '../../src/main/data-dir-lock.js'
import { runCli } from '../helpers/cli.js'
import { TEST_SECRET } from '../helpers/gateway.js'
import { startGatewayProcess } from '../helpers/gateway-process.js'

// The data folder's lock was an abstract Unix socket any local user could bind: a fake one naming
// another pid made `tollgate reload` send that pid SIGHUP, and made `tollgate start` refuse the
// folder. Now it is a flock on <dataDir>/tollgate.lock, and reload signals a pid only when the file
// is the folder owner's, its lock is held, that pid has it open, and it is a tollgate process (its
// title). Each fake below names a `sleep` child of this test, which must survive (SIGHUP would end it).

const env = { TOLLGATE_SECRET: TEST_SECRET }
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const networks = { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full' }] } }

/** A data folder with a config naming it, and a process that SIGHUP would kill. */
function victimFolder(t: { teardown(fn: () => unknown): void }) {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-lock-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const configPath = join(dataDir, 'config.json')
  writeFileSync(configPath, JSON.stringify({ dataDir, networks }))
  const victim = spawn('sleep', ['600'], { stdio: 'ignore' })
  t.teardown(() => victim.kill('SIGKILL'))
  const lockPath = join(dataDir, LOCK_FILE)
  writeFileSync(lockPath, JSON.stringify({ pid: victim.pid, role: 'a gateway', since: new Date().toISOString() }), { mode: 0o600 })
  const alive = () => victim.exitCode === null && victim.signalCode === null
  return { dataDir, configPath, lockPath, victim, alive }
}

t.test('a lock file naming another pid, its lock not held: reload signals nothing', async (t) => {
  const f = victimFolder(t)
  const out = await runCli(['reload', '--config', f.configPath], env)
  t.equal(out.code, 1)
  t.match(out.stderr, /no gateway holds the data folder/)
  t.ok(f.alive(), 'the process it names was not signalled')
})

t.test('a held lock whose file names a pid that does not hold it: refused, nothing signalled', async (t) => {
  const f = victimFolder(t)
  // This test holds the file's lock (as a fake holder would), the file naming the sleep child.
  const fd = openSync(f.lockPath, 'r')
  t.teardown(() => closeSync(fd))
  const flock = spawn('flock', ['--exclusive', '3'], { stdio: ['ignore', 'ignore', 'ignore', fd] })
  await new Promise((resolve) => flock.on('exit', resolve))
  const out = await runCli(['reload', '--config', f.configPath], env)
  t.equal(out.code, 1)
  t.match(out.stderr, new RegExp(`names pid ${f.victim.pid}, which does not have it open: not the holder, so it is not signalled`))
  t.ok(f.alive(), 'the process it names was not signalled')
})

t.test('a held lock whose named pid has the file open but is no tollgate process: refused, nothing signalled', async (t) => {
  const f = victimFolder(t)
  // The sleep child itself holds the file open (as its fd 3) and the lock through it: every check
  // but the last passes, as for a shell or an editor that inherited the gateway's descriptor.
  const fd = openSync(f.lockPath, 'r')
  t.teardown(() => closeSync(fd))
  f.victim.kill('SIGKILL')
  const holder = spawn('sleep', ['600'], { stdio: ['ignore', 'ignore', 'ignore', fd] })
  t.teardown(() => holder.kill('SIGKILL'))
  writeFileSync(f.lockPath, JSON.stringify({ pid: holder.pid, role: 'a gateway', since: new Date().toISOString() }))
  await new Promise((resolve) => spawn('flock', ['--exclusive', '3'], { stdio: ['ignore', 'ignore', 'ignore', fd] }).on('exit', resolve))
  const out = await runCli(['reload', '--config', f.configPath], env)
  t.equal(out.code, 1)
  t.match(
    out.stderr,
    new RegExp(
      `UntrustedLockFileError: the lock file \\S+ names pid ${holder.pid}, which has it open but is not a tollgate process \\(its command line is "sleep 600"\\): it is not signalled`,
    ),
  )
  t.ok(holder.exitCode === null && holder.signalCode === null, 'the process it names was not signalled')
})

t.test('a lock file of another user: refused, nothing signalled', { skip: process.getuid?.() !== 0 && 'chown needs root' }, async (t) => {
  const f = victimFolder(t)
  chownSync(f.lockPath, 65534, 65534)
  const fd = openSync(f.lockPath, 'r')
  t.teardown(() => closeSync(fd))
  await new Promise((resolve) => spawn('flock', ['--exclusive', '3'], { stdio: ['ignore', 'ignore', 'ignore', fd] }).on('exit', resolve))
  const out = await runCli(['reload', '--config', f.configPath], env)
  t.equal(out.code, 1)
  t.match(out.stderr, /the lock file \S+ belongs to uid 65534, not to the data folder's owner/)
  t.ok(f.alive(), 'the process it names was not signalled')
})

t.test('the old abstract socket bound by someone else blocks nothing; a real gateway is found and signalled', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-lock-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const { statSync } = await import('node:fs')
  const { dev, ino } = statSync(dataDir)
  // Bound by "another user" before the gateway starts, answering as a holder that names the victim.
  const victim = spawn('sleep', ['600'], { stdio: 'ignore' })
  t.teardown(() => victim.kill('SIGKILL'))
  const squatter = createServer((socket) => socket.end(JSON.stringify({ pid: victim.pid, role: 'a gateway', since: new Date().toISOString() })))
  await new Promise<void>((resolve) => squatter.listen({ path: `\0tollgate:data:${dev}:${ino}` }, resolve))
  t.teardown(() => squatter.close())
  const gateway = await startGatewayProcess(t, { config: { networks, dataDir } })
  const out = await runCli(['reload', '--config', gateway.configPath], env)
  t.equal(out.code, 0, out.stderr)
  t.same(out.last, { pid: gateway.pid, role: 'a gateway' }, 'the gateway that holds the folder')
  const logged = await gateway.waitForLog((l) => /^config reloaded|^reload refused/.test(String(l.msg)))
  t.match(logged.msg, /^config reloaded/, 'the gateway read its config again')
  t.ok(victim.exitCode === null && victim.signalCode === null, 'the pid the squatter named was not signalled')
})

t.test(
  "another user's lock file, held: refused naming its owner, not believed for the pid it names",
  { skip: process.getuid?.() !== 0 && 'chown needs root' },
  async (t) => {
    const f = victimFolder(t)
    chownSync(f.lockPath, 65534, 65534)
    const fd = openSync(f.lockPath, 'r')
    t.teardown(() => closeSync(fd))
    await new Promise((resolve) => spawn('flock', ['--exclusive', '3'], { stdio: ['ignore', 'ignore', 'ignore', fd] }).on('exit', resolve))
    await t.rejects(lockDataDir(f.dataDir, 'gateway', 'a gateway'), {
      name: 'UntrustedLockFileError',
      message: /belongs to uid 65534, neither this process's user \(uid 0\) nor the data folder's owner \(uid 0\): another user made it/,
    })
  },
)

t.test('a lock file that is a symbolic link: refused, the file it points at left as it was', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-lock-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const target = join(dataDir, 'precious')
  writeFileSync(target, 'not a lock file')
  symlinkSync(target, join(dataDir, LOCK_FILE))
  await t.rejects(lockDataDir(dataDir, 'gateway', 'a gateway'), { name: 'UntrustedLockFileError', message: /is a symbolic link, which a gateway never makes/ })
  t.equal(readFileSync(target, 'utf8'), 'not a lock file')
  t.ok(existsSync(join(dataDir, LOCK_FILE)), 'the link is left for the operator to look at')
})
