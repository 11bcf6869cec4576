import t from 'tap'
import { connect } from 'node:net'
import { gunzipSync } from 'node:zlib'
import { randomBytes } from 'node:crypto'
import { uws } from '../../src/front/uws.js'
import { listenUws } from '../helpers/listen-local.js'
import { sendReply } from '../../src/front/respond.js'
import { Exchanges } from '../../src/front/exchanges.js'

// A large body is sent with tryEnd/onWritable: a client that reads slowly (the socket fills up
// and drains many times) must still get every byte, in order, with the right length.

const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: randomBytes(4_000_000).toString('hex') }))
const app = uws.App()
const exchanges = new Exchanges()
app.get('/plain', (res) => {
  const state = exchanges.begin(res)
  setTimeout(() => sendReply(res, state, { status: 200, body }, false), 1)
})
// As the gateway sends a node's answer: a small new head, then the node's bytes in socket reads.
const chunks = [
  Buffer.from(body.subarray(0, 40)),
  ...Array.from({ length: Math.ceil((body.length - 40) / 65536) }, (_, i) => body.subarray(40 + i * 65536, 40 + (i + 1) * 65536)),
]
app.get('/chunks', (res) => {
  const state = exchanges.begin(res)
  setTimeout(() => sendReply(res, state, { status: 200, body: chunks }, false), 1)
})
app.get('/gzip', (res) => {
  const state = exchanges.begin(res)
  sendReply(res, state, { status: 200, body }, true)
})
const port = await listenUws(t, app)

/** GET with a client that pauses after every read, so that the server sees backpressure. */
function slowGet(path: string, extraHeaders = ''): Promise<{ head: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const s = connect(port, '127.0.0.1', () => {
      s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n${extraHeaders}\r\n`)
      // Read nothing for a while: the kernel buffers fill and the server must wait for drain.
      s.pause()
      setTimeout(() => s.resume(), 200)
    })
    s.on('data', (c: Buffer) => {
      chunks.push(c)
      s.pause()
      setTimeout(() => s.resume(), 2)
      const all = Buffer.concat(chunks)
      const end = all.indexOf('\r\n\r\n')
      if (end < 0) return
      const head = all.subarray(0, end).toString('latin1')
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? -1)
      if (all.length - end - 4 >= length) {
        s.destroy()
        resolve({ head, body: all.subarray(end + 4, end + 4 + length) })
      }
    })
    s.on('error', reject)
    setTimeout(() => reject(new Error('no complete answer within 20 s')), 20_000).unref()
  })
}

t.test('an 8 MB body reaches a slow reader intact', async (t) => {
  const r = await slowGet('/plain')
  t.match(r.head, /^HTTP\/1\.1 200 OK/)
  t.equal(r.body.length, body.length)
  t.ok(r.body.equals(body), 'every byte, in order')
})

t.test('the same body in chunks reaches a slow reader intact', async (t) => {
  const r = await slowGet('/chunks')
  t.match(r.head, /^HTTP\/1\.1 200 OK/)
  t.equal(r.body.length, body.length)
  t.ok(r.body.equals(body), 'every byte, in order')
})

t.test('its gzip form too', async (t) => {
  const r = await slowGet('/gzip', 'Accept-Encoding: gzip\r\n')
  t.match(r.head, /content-encoding: gzip/i)
  t.ok(gunzipSync(r.body).equals(body), 'decompresses to the body')
})

t.test('a streamed answer counts as open until its last byte is sent or the client leaves', async (t) => {
  await exchanges.idle()
  t.equal(exchanges.open, 0, 'no exchange left open by the two answers above')
})
