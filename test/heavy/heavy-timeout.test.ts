import t from 'tap'
import { startAnvil } from '../helpers/anvil.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'

// A heavy call has a time-out of its own: a trace on a hung node ends with 504 after
// heavy.timeoutMs (here 400 ms), though ordinary calls would wait limits.upstreamTimeoutMs (60 s).
// When every node is out, the 503 says why.
const anvil = await startAnvil()
t.teardown(async () => {
  anvil.thaw()
  await anvil.stop()
})
const tg = await startTestGateway(t, {
  networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full', name: 'only' }] } },
  limits: { upstreamTimeoutMs: 60_000 },
  config: {
    heavy: { timeoutMs: 400, methodTimeoutMs: { debug_traceBlockByNumber: 600 } },
    health: { pollMs: 600_000, failureThreshold: 2, cooldownMs: 600_000 },
    cache: { finalityPollMs: 600_000 },
  },
})
const { apiKey } = await tg.createKey('tier-3')
const call = (method: string, params: unknown[]) => rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: 1, method, params }, { apiKey })
/** The same, abandoned by the client after 10 s: a heavy call that waited for the 60 s time-out fails the test. */
async function heavy(method: string, params: unknown[]): Promise<{ status: number; json: any }> {
  const res = await fetch(`${tg.url('eth-1')}?apikey=${apiKey}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  })
  return { status: res.status, json: await res.json() }
}

t.test('heavy calls time out on their own bound', async (t) => {
  await anvil.freeze()
  const trace = await heavy('debug_traceTransaction', ['0x' + '00'.repeat(32), {}])
  t.equal(trace.status, 504)
  t.equal(trace.json.error.code, -32021)
  const block = await heavy('debug_traceBlockByNumber', ['0x0', {}])
  t.equal(block.status, 504, 'and with a per-method time-out')
  anvil.thaw()
})

t.test('no healthy node: 503 saying which nodes are out and why', async (t) => {
  const res = await call('eth_blockNumber', [])
  t.equal(res.status, 503)
  t.equal(res.json.error.code, -32020)
  t.match(res.json.error.message, /No healthy full node for eth-1 right now \(only: failing\); retry with backoff/)
})
