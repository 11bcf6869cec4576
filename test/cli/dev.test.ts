import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { startDev } from '../helpers/dev-process.js'

// `tollgate dev` on a fresh data folder: starts anvil, prints a key and a curl line that works;
// a second run shows the same key again.
const dataDir = await mkdtemp(join(tmpdir(), 'tollgate-dev-'))
t.teardown(() => rm(dataDir, { recursive: true, force: true }))

async function runDev(): Promise<{ key: string; curl: string; metrics: string; stop: () => Promise<number | null> }> {
  const { banner, stop } = await startDev(t, dataDir)
  const key = /API key[^:]*: (tg_\w+)/.exec(banner)?.[1] ?? ''
  const curl = banner.split('\n').find((l) => l.trim().startsWith('curl ')) ?? ''
  const metrics = /Metrics: (\S+)/.exec(banner)?.[1] ?? ''
  return { key, curl: curl.trim(), metrics, stop }
}

t.test('the printed curl line works', async (t) => {
  const dev = await runDev()
  t.match(dev.key, /^tg_/)
  t.match(dev.curl, /^curl -s http:\/\/127\.0\.0\.1:\d+\/http\/dev-1 /)
  const { stdout } = await promisify(execFile)('sh', ['-c', dev.curl])
  const answer = JSON.parse(stdout)
  t.equal(answer.id, 1)
  t.match(answer.result, /^0x[0-9a-f]+$/)
  t.match(dev.metrics, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/, 'the metrics URL is printed')
  t.not(new URL(dev.metrics).port, new URL(dev.curl.split(' ')[2]!).port, 'on the admin listener, not the RPC port')
  t.match(await (await fetch(dev.metrics)).text(), /^tollgate_http_responses_total\{network="dev-1",status="200"\} 1$/m)
  t.equal(await dev.stop(), 0, 'stops cleanly on Ctrl-C')

  const again = await runDev()
  t.equal(again.key, dev.key, 'a second run shows the same demo key')
  await again.stop()
})
