import t from 'tap'
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import zlib from 'node:zlib'
import { syncBuiltinESMExports } from 'node:module'

// The dashboard's static files were gzip-compressed again for every request that accepts gzip:
// the same bytes, the same CPU, each time. They are compressed once and kept. The gzip functions
// of node:zlib are counted (the real ones run), then a real gateway is started in this process:
// the count must not grow with the requests.

let compressions = 0
for (const name of ['gzip', 'gzipSync'] as const) {
  const real = zlib[name] as (...args: unknown[]) => unknown
  ;(zlib as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
    compressions++
    return real(...args)
  }
}
syncBuiltinESMExports()
const { anvilGateway } = await import('../helpers/anvil-gateway.js')

const dir = await mkdtemp(join(tmpdir(), 'tollgate-static-'))
t.teardown(() => rm(dir, { recursive: true, force: true }))
await mkdir(join(dir, 'assets'))
// Text that compresses (a repeated random line), about 300 KB like the dashboard's script.
const script = `${randomBytes(30).toString('hex')}\n`.repeat(5000)
await writeFile(join(dir, 'assets', 'main-abc123.js'), script)
await writeFile(join(dir, 'index.html'), `<!doctype html><title>t</title>${'<p>hello</p>'.repeat(200)}`)
const { tg } = await anvilGateway(t, { nodeWs: false, dashboardDir: dir, plan: null })

t.test('100 gzip requests for a static file compress nothing more; the answers are right', async (t) => {
  const before = compressions
  for (let i = 0; i < 100; i++) {
    const path = i % 2 ? '/assets/main-abc123.js' : '/'
    const res = await fetch(tg.gateway.http + path, { headers: { 'accept-encoding': 'gzip' } })
    t.equal(res.status, 200)
    t.equal(res.headers.get('content-encoding'), 'gzip')
    t.equal(res.headers.get('vary'), 'Accept-Encoding')
    if (i === 1) t.equal(await res.text(), script, 'fetch decompressed it back to the file')
    else await res.arrayBuffer()
  }
  t.equal(compressions - before, 0, 'no compression per request (before: one each)')
  const plain = await fetch(tg.gateway.http + '/assets/main-abc123.js', { headers: { 'accept-encoding': 'identity' } })
  t.equal(plain.headers.get('content-encoding'), null, 'a client without gzip gets the file as it is')
  t.equal(await plain.text(), script)
})
