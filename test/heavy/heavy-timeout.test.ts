import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { startCountingProxy } from '../helpers/counting-proxy.js'
import { waitFor } from '../helpers/eventually.js'
import { rpc, startTestGateway } from '../helpers/gateway.js'

// A heavy call has a time-out of its own: a trace on a hung node ends with 504 after
// heavy.timeoutMs (here 400 ms), though ordinary calls would wait limits.upstreamTimeoutMs (60 s),
// and heavy.methodTimeoutMs replaces it for the methods it names. When every node is out, the
// 503 says why. The node is a real anvil, hung with SIGSTOP, behind a proxy that counts the calls
// reaching it (so that the test knows when a call is waiting on the node).
const anvil = await startAnvil()
t.teardown(async () => {
  anvil.thaw()
  await anvil.stop()
})
const proxy = await startCountingProxy(anvil)
t.teardown(() => proxy.close())
const tg = await startTestGateway(t, {
  networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: proxy.url, kind: 'full', name: 'only' }] } },
  limits: { upstreamTimeoutMs: 60_000 },
  quiet: true,
  config: {
    // A per-method time-out far longer than the default: a call that gets the default instead
    // ends 504 long before the node is let go.
    heavy: { timeoutMs: 400, methodTimeoutMs: { debug_traceBlockByNumber: 600_000 } },
    health: { failureThreshold: 2, cooldownMs: 600_000 },
  },
})
const { apiKey } = await tg.createKey('tier-3')
const call = (method: string, params: unknown[]) => rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: 1, method, params }, { apiKey })
/**
 * The same, abandoned by the client after `abortMs` (10 s): a heavy call that waited for the 60 s
 * time-out fails the test.
 */
async function heavy(method: string, params: unknown[], abortMs = 10_000): Promise<{ status: number; json: any }> {
  const res = await fetch(`${tg.url('eth-1')}?apikey=${apiKey}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(abortMs),
  })
  return { status: res.status, json: await res.json() }
}

t.test('a per-method time-out replaces the default: the call outlives a default one sent after it', async (t) => {
  await anvil.freeze()
  const before = proxy.count('debug_traceBlockByNumber')
  let settled = false
  const long = heavy('debug_traceBlockByNumber', ['0x0', {}], 120_000).finally(() => (settled = true))
  await waitFor(() => proxy.count('debug_traceBlockByNumber') > before, 'the block trace to wait on the node')
  // Sent after the block trace, with the default time-out: its 504 comes after the default has
  // run out for the block trace too, had it been given the default.
  const short = await heavy('debug_traceTransaction', ['0x' + '00'.repeat(32), {}])
  t.equal(short.status, 504, 'the default time-out')
  t.equal(short.json.error.code, -32021)
  t.notOk(settled, 'the block trace still waits on the node')
  anvil.thaw()
  const block = await long
  t.equal(block.status, 200, 'the node answered the block trace once it was let go')
  t.same(block.json.result, [], 'the trace of block 0, which has no transactions')
})

t.test('heavy calls time out on their own bound', async (t) => {
  await anvil.freeze()
  for (const hash of ['01', '02']) {
    const trace = await heavy('debug_traceTransaction', ['0x' + hash.repeat(32), {}])
    t.equal(trace.status, 504)
    t.equal(trace.json.error.code, -32021)
  }
  anvil.thaw()
})

t.test('no healthy node: 503 saying which nodes are out and why', async (t) => {
  const res = await call('eth_blockNumber', [])
  t.equal(res.status, 503)
  t.equal(res.json.error.code, -32020)
  t.match(res.json.error.message, /No healthy full node for eth-1 right now \(only: failing\); retry with backoff/)
})
