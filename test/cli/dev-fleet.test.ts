import t from 'tap'
import { spawn, execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort } from '../../harness/free-port.js'
import { runCli } from '../helpers/cli.js'
import { builtMain } from '../helpers/built.js'

// `tollgate dev --fleet`: 3 NATS servers in a cluster, 3 gateways, nginx in front; the printed
// curl line works through nginx, `tollgate fleet` lists the 3 instances, and Ctrl-C stops it all.

const MAIN = await builtMain()
const dataDir = await mkdtemp(join(tmpdir(), 'tollgate-dev-fleet-'))
t.teardown(() => rm(dataDir, { recursive: true, force: true }))

t.test('the printed curl line works through nginx, and the fleet has three instances', async (t) => {
  const port = await freePort()
  const child = spawn(process.execPath, [MAIN, 'dev', '--fleet', '--port', String(port), '--data', dataDir], {
    env: { ...process.env, TOLLGATE_SECRET: '', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.teardown(() => void (child.exitCode === null && child.kill('SIGKILL')))
  let out = ''
  let err = ''
  child.stderr.on('data', (d: Buffer) => (err += d.toString()))
  const banner = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no curl line within 60 s; stderr: ${err}`)), 60_000)
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      if (/Stop:/.test(out)) {
        clearTimeout(timer)
        resolve(out)
      }
    })
    child.once('exit', (code) => reject(new Error(`dev --fleet exited with ${code}: ${err}`)))
  })
  const curl = banner.split('\n').find((l) => l.trim().startsWith('curl ')) ?? ''
  t.match(curl.trim(), new RegExp(`^curl -s http://127\\.0\\.0\\.1:${port}/http/dev-1 `), 'the endpoint is nginx on --port')
  const { stdout } = await promisify(execFile)('sh', ['-c', curl.trim()])
  t.match(JSON.parse(stdout), { id: 1, result: /^0x[0-9a-f]+$/ })
  const configPath = /fleet --config (\S+)/.exec(banner)?.[1] ?? ''
  const listed = await runCli(['fleet', '--config', configPath, '--json'], { TOLLGATE_SECRET: 'unused-by-this-command-0123456789abcdef' })
  t.equal(listed.code, 0, listed.stderr)
  t.equal(listed.stdout.trim().split('\n').length, 3, 'three instances')
  child.removeAllListeners('exit')
  const code = await new Promise<number | null>((resolve) => {
    child.once('exit', (c) => resolve(c))
    child.kill('SIGINT')
  })
  t.equal(code, 0, 'Ctrl-C stops the fleet cleanly')
})
