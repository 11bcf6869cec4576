import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { freePort } from '../../harness/free-port.js'
import { UpstreamTimeout, UpstreamTransportError } from '../../src/upstream/errors.js'
import { nodeOn } from '../helpers/upstream-pool.js'

const anvil = await startAnvil({ chainId: 5 })
// Teardowns run last in, first out: the anvil thawed, then the node closed, then the anvil stopped.
t.teardown(() => anvil.stop())
const node = nodeOn(t, anvil.url, { name: 'a', wsUrl: anvil.wsUrl, ws: { reconnectMinMs: 50, reconnectMaxMs: 300, maxSilentTimeouts: 3 } })
t.teardown(() => anvil.thaw())
const ws = node.ws!
const states: boolean[] = []
ws.onStateChange = (open) => states.push(open)
const opened = await ws.waitOpen(5_000)
t.ok(opened, 'the socket opens')

const chainId = async () => JSON.parse((await node.call({ method: 'eth_chainId', params: [] }, 3_000)).text).result

t.test('calls pending when the node dies fail at once, then the socket comes back', async (t) => {
  t.equal(await chainId(), '0x5')
  t.equal(node.counters.wsCalls, 1)
  await anvil.freeze()
  // Outcomes taken at once: three rejections in one tick must not count as unhandled.
  const outcomes = [1, 2, 3].map(() =>
    node.call({ method: 'eth_blockNumber', params: [] }, 30_000).then(
      () => undefined,
      (e: unknown) => e,
    ),
  )
  t.equal(ws.pending, 3)
  await anvil.kill()
  for (const outcome of outcomes) {
    const err = await outcome
    t.type(err, UpstreamTransportError)
    t.notOk(err instanceof UpstreamTimeout, 'failed by the close, not by its 30 s time-out')
    t.equal((err as UpstreamTransportError).requestSent, true)
  }
  t.equal(ws.pending, 0)
  t.equal(ws.isOpen(), false)
  await anvil.restart()
  t.ok(await ws.waitOpen(10_000), 'reconnected to the restarted node')
  const before = node.counters.wsCalls
  t.equal(await chainId(), '0x5')
  t.equal(node.counters.wsCalls, before + 1, 'and calls go over it again')
  t.same(states, [true, false, true])
})

t.test('a time-out removes the call; its late reply is dropped', async (t) => {
  await anvil.freeze()
  await t.rejects(node.call({ method: 'net_version', params: [] }, 200), UpstreamTimeout)
  t.equal(ws.pending, 0)
  anvil.thaw()
  // The late net_version reply arrives on the same socket; the next call must get its own answer.
  t.equal(await chainId(), '0x5')
  t.equal(ws.isOpen(), true, 'one time-out does not drop the socket')
})

t.test('time-outs with nothing heard from the node drop the socket, which is opened again', async (t) => {
  await anvil.freeze()
  const calls = [1, 2, 3].map(() => node.call({ method: 'eth_chainId', params: [] }, 150))
  await Promise.all(calls.map((call) => t.rejects(call, UpstreamTimeout)))
  t.equal(ws.isOpen(), false, 'dropped after the third silent time-out')
  const viaHttp = node.counters.httpCalls
  anvil.thaw()
  t.equal(await chainId(), '0x5', 'meanwhile calls go over HTTP')
  t.ok(node.counters.httpCalls > viaHttp || ws.isOpen())
  t.ok(await ws.waitOpen(10_000), 'the socket is opened again')
})

t.test('a node whose socket never opens is served over HTTP', async (t) => {
  const httpOnly = nodeOn(t, anvil.url, { name: 'b', wsUrl: `ws://127.0.0.1:${await freePort()}` })
  const reply = await httpOnly.call({ method: 'eth_chainId', params: [] }, 3_000)
  t.equal(JSON.parse(reply.text).result, '0x5')
  t.equal(httpOnly.counters.httpCalls, 1)
  t.equal(httpOnly.counters.wsCalls, 0)
})
