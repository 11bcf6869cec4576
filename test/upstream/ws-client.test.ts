import t from 'tap'
import { uws } from '../../src/front/uws.js'
import { listenUws } from '../helpers/listen-local.js'
import { UpstreamWebSocket } from '../../src/upstream/ws-client.js'

// The upstream WebSocket client against a real uWebSockets.js server: every frame size, fragments,
// pings, many frames written in one turn, and the closing handshake.

const big = Buffer.alloc(1_200_000, 'x').toString()
const app = uws.App()
app.ws('/*', {
  maxPayloadLength: 16 * 1024 * 1024,
  message: (ws, message) => {
    const text = Buffer.from(message).toString()
    if (text === 'big') ws.send(big, false)
    else if (text === 'fragments') {
      ws.sendFirstFragment('one,', false)
      ws.sendFragment('two,', false)
      ws.sendLastFragment('three', false)
    } else if (text === 'big-fragments') {
      // 1,800 bytes in three fragments, each under a limit of 1,000 but not together.
      ws.sendFirstFragment(`{"id":7,"a":"${'x'.repeat(587)}`, false)
      ws.sendFragment('y'.repeat(600), false)
      ws.sendLastFragment(`${'z'.repeat(598)}"}`, false)
    } else if (text === 'ping') {
      ws.ping('p')
      ws.send('after ping', false)
    } else if (text === 'close') ws.end(1000, 'bye')
    else ws.send(`echo:${text}`, false)
  },
})
const port = await listenUws(t, app)

function connect(opts?: { maxMessageBytes?: number }): Promise<{ ws: UpstreamWebSocket; next: () => Promise<string>; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const ws = new UpstreamWebSocket(`ws://127.0.0.1:${port}/`, opts)
    const queue: string[] = []
    const waiters: Array<(s: string) => void> = []
    let onClosed: () => void = () => {}
    const closed = new Promise<void>((r) => (onClosed = r))
    ws.addEventListener('message', (ev) => {
      // A message over the limit arrives as its size and first bytes.
      const text = ev.tooLarge === undefined ? ev.bytes!.toString() : `too large: ${ev.tooLarge}, ${ev.bytes!.toString()}`
      const w = waiters.shift()
      if (w) w(text)
      else queue.push(text)
    })
    ws.addEventListener('close', () => onClosed())
    ws.addEventListener('error', () => reject(new Error('could not connect')))
    ws.addEventListener('open', () => resolve({ ws, closed, next: () => new Promise<string>((r) => (queue.length ? r(queue.shift()!) : waiters.push(r))) }))
  })
}

t.test('messages of every length encoding, fragments and pings', async (t) => {
  const { ws, next } = await connect()
  t.equal(ws.readyState, UpstreamWebSocket.OPEN)
  ws.send('a')
  t.equal(await next(), 'echo:a', '7-bit length')
  const medium = 'm'.repeat(40_000)
  ws.send(medium)
  t.equal(await next(), `echo:${medium}`, '16-bit length, masked payload intact')
  ws.send('big')
  t.equal(await next(), big, '64-bit length, arriving in many reads')
  ws.send('fragments')
  t.equal(await next(), 'one,two,three', 'fragments joined')
  ws.send('ping')
  t.equal(await next(), 'after ping', 'a ping is answered and does not disturb messages')
  ws.close()
})

t.test('a message over the limit is dropped as it comes, keeping its first bytes; the next one arrives', async (t) => {
  const { ws, next } = await connect({ maxMessageBytes: 1_000 })
  ws.send('big')
  t.equal(await next(), `too large: ${big.length}, ${big.slice(0, 256)}`, 'one frame, in many reads')
  ws.send('a')
  t.equal(await next(), 'echo:a')
  ws.send('big-fragments')
  t.equal(await next(), `too large: 1800, {"id":7,"a":"${'x'.repeat(256 - 13)}`, 'fragments that together are over it: the first bytes of the first')
  ws.send('fragments')
  t.equal(await next(), 'one,two,three', 'fragments under it are joined as before')
  ws.close()
})

t.test('frames sent in one turn all arrive, in order', async (t) => {
  const { ws, next } = await connect()
  for (let i = 0; i < 200; i++) ws.send(String(i))
  t.ok(ws.bufferedAmount > 0, 'queued until the end of the turn')
  for (let i = 0; i < 200; i++) t.equal(await next(), `echo:${i}`)
  ws.close()
})

t.test('the server closing is seen, and sending after it is a no-op', async (t) => {
  const { ws, closed } = await connect()
  ws.send('close')
  await closed
  t.equal(ws.readyState, UpstreamWebSocket.CLOSED)
  t.doesNotThrow(() => ws.send('late'))
})

t.test('a refused connection ends in close', async (t) => {
  const ws = new UpstreamWebSocket('ws://127.0.0.1:1/')
  await new Promise<void>((resolve) => ws.addEventListener('close', () => resolve()))
  t.equal(ws.readyState, UpstreamWebSocket.CLOSED)
})
