import t from 'tap'
import { Writable } from 'node:stream'
import { once } from 'node:events'
import pino from 'pino'
import { FakeClock } from '../helpers/fake-clock.js'
import { FaultLog } from '../../src/gateway/fault-log.js'
import { GatewayError } from '../../src/errors/registry.js'
import { NoHealthyUpstream, UpstreamTransportError } from '../../src/upstream/errors.js'

// The fault log is bounded per kind of fault: a flood of identical failures (every node of a
// network down under full load) is a few lines and a count, not one line per request.

function logged(): { lines: any[]; stream: Writable } {
  const lines: any[] = []
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const text of chunk.toString().split('\n')) if (text !== '') lines.push(JSON.parse(text))
      stream.emit('line')
      done()
    },
  })
  return { lines, stream }
}

const reset = new UpstreamTransportError('the connection was reset (ECONNRESET)', { node: 'a', requestSent: true })

t.test('past the burst, a kind of fault is counted and said once when its window ends', async (t) => {
  const { lines, stream } = logged()
  const clock = new FakeClock()
  const faults = new FaultLog(pino({ level: 'warn' }, stream), { clock, burst: 3, windowMs: 1000 })
  for (let i = 0; i < 5; i++) faults.nodeFailed('eth-1', 'a', reset, 'eth_call')
  faults.nodeFailed('eth-1', 'b', reset, 'eth_call')
  t.equal(lines.length, 4, 'three of a, and b on its own')
  t.same(
    lines.map((l) => [l.node, l.msg]),
    [
      ['a', 'node a of eth-1 failed eth_call: the connection was reset (ECONNRESET)'],
      ['a', 'node a of eth-1 failed eth_call: the connection was reset (ECONNRESET)'],
      ['a', 'node a of eth-1 failed eth_call: the connection was reset (ECONNRESET)'],
      ['b', 'node b of eth-1 failed eth_call: the connection was reset (ECONNRESET)'],
    ],
  )
  clock.advance(1000)
  faults.nodeFailed('eth-1', 'a', reset, 'eth_getBalance')
  t.equal(lines.length, 6)
  t.match(lines[4], {
    level: 40,
    node: 'a',
    method: 'eth_call',
    repeated: 2,
    msg: 'node a of eth-1 failed eth_call: the connection was reset (ECONNRESET) (2 times more within 1000 ms)',
  })
  t.match(lines[5], { node: 'a', method: 'eth_getBalance' })
  t.equal(lines[5].repeated, undefined)
})

t.test('what is held back is written when the window ends, with no later fault to trigger it', async (t) => {
  const { lines, stream } = logged()
  const faults = new FaultLog(pino({ level: 'warn' }, stream), { burst: 1, windowMs: 50 })
  const e = new GatewayError('NO_HEALTHY_UPSTREAM', 'No healthy full node for eth-1 right now (a: failing); retry with backoff', {
    cause: new NoHealthyUpstream({ network: 'eth-1', kind: 'full', why: 'a: failing' }),
  })
  for (let i = 0; i < 4; i++) faults.answered(e, { network: 'eth-1', method: 'eth_blockNumber' })
  t.equal(lines.length, 1)
  t.match(lines[0], { level: 40, status: 503, code: 'NO_HEALTHY_UPSTREAM', rpc: -32020, network: 'eth-1', method: 'eth_blockNumber', why: 'a: failing' })
  // Bounded; this timer also keeps the process up (the log's own timer does not: it is unref'd).
  let bound: NodeJS.Timeout | undefined
  await Promise.race([once(stream, 'line'), new Promise((resolve) => (bound = setTimeout(resolve, 5_000)))])
  clearTimeout(bound)
  t.equal(lines.length, 2)
  t.match(lines[1], { code: 'NO_HEALTHY_UPSTREAM', repeated: 3 })
})

t.test('a 500 is logged at error, with its cause and the calls it answered', async (t) => {
  const { lines, stream } = logged()
  const faults = new FaultLog(pino({ level: 'warn' }, stream))
  faults.answered(new GatewayError('INTERNAL_ERROR', undefined, { cause: new TypeError('x is undefined') }), { network: 'eth-1', method: 'eth_call' })
  faults.answered(
    new GatewayError('UPSTREAM_ERROR', 'The node failed to answer: HTTP 200 with an empty body; retry with backoff', {
      cause: new UpstreamTransportError('HTTP 200 with an empty body', { node: 'b', requestSent: true }),
    }),
    {
      network: 'eth-1',
      method: 'eth_call',
      calls: 7,
    },
  )
  t.match(lines[0], { level: 50, status: 500, code: 'INTERNAL_ERROR', err: 'TypeError: x is undefined' })
  t.match(lines[1], { level: 40, status: 502, node: 'b', calls: 7, err: 'UpstreamTransportError: b: HTTP 200 with an empty body' })
})
