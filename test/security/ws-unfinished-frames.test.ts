import { readFile } from 'node:fs/promises'
import { connect, type Socket } from 'node:net'
import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { createAccountKey } from '../helpers/fleet.js'
import { startGatewayProcess } from '../helpers/gateway-process.js'
import { within } from '../helpers/eventually.js'

// What unfinished WebSocket frames can make a real gateway process hold. uWS buffers the part of
// a message that has arrived in native memory the gateway never sees: with its bound at 16 MiB,
// 40 connections each sending the header of a 15 MiB frame and 14 MiB of it moved the process's
// RSS from 119 to 611 MiB. Now a frame over ws.maxMessageBytes is refused at its header, and what
// a connection can hold is one message of at most that size.

const MIB = 1024 * 1024
const CONNECTIONS = 40
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const gw = await startGatewayProcess(t, {
  config: { networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full' }] } } },
})
// Ten connections a key, opened at once: within the 50 a key may hold and the 15 it may open a second.
const PER_KEY = 10
const keys = await Promise.all(Array.from({ length: (2 * CONNECTIONS) / PER_KEY }, async () => (await createAccountKey(gw, 'tier-3')).apiKey))

async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024
}

interface RawWs {
  socket: Socket
}

/** A WebSocket upgrade written by hand: frames are then written byte by byte, as no client library would. */
function openRaw(apiKey: string): Promise<RawWs> {
  const { hostname, port } = new URL(gw.ws)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    socket.on('error', () => {})
    let head = ''
    const onData = (d: Buffer): void => {
      head += d.toString('latin1')
      if (!head.includes('\r\n\r\n')) return
      if (head.startsWith('HTTP/1.1 101')) {
        socket.off('data', onData)
        return resolve({ socket })
      }
      // A refusal: its body (which names the reason: which 401, which 429) goes into the failure.
      const [status, rest] = [head.split('\r\n')[0], head.slice(head.indexOf('\r\n\r\n') + 4)]
      const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0)
      if (Buffer.byteLength(rest, 'latin1') < length) return
      socket.off('data', onData)
      socket.destroy()
      reject(new Error(`upgrade refused for key ${keys.indexOf(apiKey)}: ${status}; ${rest}`))
    }
    socket.on('data', onData)
    socket.write(
      `GET /ws/eth-1?apikey=${apiKey} HTTP/1.1\r\nHost: ${hostname}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    )
  })
}

/** The header of a masked text frame of `length` bytes (a zero mask: the payload is sent as it is). */
function frameHeader(length: number): Buffer {
  const header = Buffer.alloc(14)
  header[0] = 0x81
  header[1] = 0x80 | 127
  header.writeBigUInt64BE(BigInt(length), 2)
  return header
}

/** Write `bytes` of spaces in 1 MiB pieces; resolves when written or when the peer closed. */
async function writeSpaces(raw: RawWs, bytes: number): Promise<void> {
  const chunk = Buffer.alloc(MIB, 0x20)
  for (let sent = 0; sent < bytes && !raw.socket.destroyed; sent += MIB) {
    const piece = chunk.subarray(0, Math.min(MIB, bytes - sent))
    await new Promise<void>((r) => (raw.socket.write(piece) ? r() : raw.socket.once('drain', r).once('close', r)))
  }
}

/** The highest RSS seen while `settle` runs, polled every 50 ms. */
async function peakRss(settle: Promise<unknown>): Promise<number> {
  let peak = await rssBytes(gw.pid)
  let done = false
  void settle.finally(() => (done = true))
  // Sampled until `settle` has run; 100 s is an outer bound (under tap's 120 s), so that the
  // sampling cannot outlive the test.
  await within(
    100_000,
    async () => {
      peak = Math.max(peak, await rssBytes(gw.pid))
      return done
    },
    50,
  )
  return Math.max(peak, await rssBytes(gw.pid))
}

t.test('40 unfinished 15 MiB frames are refused at their header and pin nothing', async (t) => {
  const before = await rssBytes(gw.pid)
  const conns = await Promise.all(Array.from({ length: CONNECTIONS }, (_, i) => openRaw(keys[Math.floor(i / PER_KEY)]!)))
  const sending = Promise.all(
    conns.map(async (c) => {
      c.socket.write(frameHeader(15 * MIB))
      await writeSpaces(c, 14 * MIB)
    }),
  )
  const peak = await peakRss(sending)
  t.ok(peak - before <= 64 * MIB, `RSS moved by ${((peak - before) / MIB).toFixed(1)} MiB (at most 64)`)
  // The gateway closed each one: the test's own sockets are never destroyed before this.
  const closed = await within(10_000, () => conns.every((c) => c.socket.destroyed))
  t.not(closed, undefined, 'every connection was closed by the gateway')
  const metrics = await (await fetch(`${gw.admin}/metrics`)).text()
  t.match(metrics, new RegExp(`tollgate_ws_closed_total\\{cause="message-too-big"\\} ${CONNECTIONS}\\b`), 'counted as messages too big')
})

t.test('40 unfinished frames just under the limit hold at most the limit each', async (t) => {
  const before = await rssBytes(gw.pid)
  const conns = await Promise.all(Array.from({ length: CONNECTIONS }, (_, i) => openRaw(keys[CONNECTIONS / PER_KEY + Math.floor(i / PER_KEY)]!)))
  t.teardown(() => {
    for (const c of conns) c.socket.destroy()
  })
  const sending = Promise.all(
    conns.map(async (c) => {
      c.socket.write(frameHeader(MIB))
      await writeSpaces(c, MIB - 1024)
    }),
  )
  const peak = await peakRss(sending)
  t.ok(peak - before <= 64 * MIB, `RSS moved by ${((peak - before) / MIB).toFixed(1)} MiB (at most 64)`)
  t.ok(
    conns.every((c) => !c.socket.destroyed),
    'frames within the limit are not refused',
  )
  // The gateway still serves: a call over HTTP meanwhile.
  const res = await fetch(`${gw.url('eth-1')}?apikey=${keys[0]}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
  })
  t.same(await res.json(), { jsonrpc: '2.0', id: 1, result: '0x7a69' }, `served over HTTP (status ${res.status})`)
})
