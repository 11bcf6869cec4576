import t from 'tap'
import { request } from 'node:http'
import { gunzipSync } from 'node:zlib'
import { anvilGateway } from '../helpers/anvil-gateway.js'

const {
  tg,
  key: { apiKey },
} = await anvilGateway(t, { plan: 'tier-1', keyNodes: [{ network: 'eth-1', kind: 'full' }] })

/** A raw HTTP POST (fetch would decompress on its own and hide the encoding). */
function post(
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${tg.url('eth-1')}?apikey=${apiKey}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

// A batch whose answer is well over the gzip threshold.
const batch = JSON.stringify(Array.from({ length: 20 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_getBlockByNumber', params: ['0x0', true] })))

t.test('gzip when the client asks for it, the same JSON once inflated', async (t) => {
  const plain = await post(batch, {})
  t.equal(plain.status, 200)
  t.equal(plain.headers['content-encoding'], undefined)
  const zipped = await post(batch, { 'accept-encoding': 'gzip, deflate' })
  t.equal(zipped.status, 200)
  t.equal(zipped.headers['content-encoding'], 'gzip')
  t.equal(zipped.headers.vary, 'Accept-Encoding')
  const inflated = gunzipSync(zipped.body)
  t.ok(zipped.body.length < inflated.length / 3, `compressed ${zipped.body.length} of ${inflated.length} bytes`)
  t.same(JSON.parse(inflated.toString()), JSON.parse(plain.body.toString()))
})

t.test('small answers are not compressed', async (t) => {
  const r = await post('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}', { 'accept-encoding': 'gzip' })
  t.equal(r.status, 200)
  t.equal(r.headers['content-encoding'], undefined)
  t.equal(JSON.parse(r.body.toString()).id, 1)
})
