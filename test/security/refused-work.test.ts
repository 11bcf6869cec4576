import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { runCli } from '../helpers/cli.js'
import { rpc, TEST_SECRET } from '../helpers/gateway.js'
import { startGatewayProcess } from '../helpers/gateway-process.js'
import { connectWs } from '../helpers/ws-client.js'
import { until } from '../helpers/eventually.js'

// A request refused before it reaches a node (too large, too many calls, bad JSON) costs the key
// nothing. Before, a WebSocket batch of 10,000 refused as too large was charged 10,000 calls and
// throttled the key for minutes at 60 per second.

const env = { TOLLGATE_SECRET: TEST_SECRET }
const RPS = 60 // set B "starter": its WebSocket messages per second are capped at its rps too
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const gw = await startGatewayProcess(t, {
  config: {
    networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full' }] } },
    plans: { catalog: 'set-b' },
    limits: { queueMs: 0 },
  },
})
const account = async (n: number): Promise<string> => {
  const out = await runCli(
    ['accounts', 'create', '--config', gw.configPath, '--wallet', `0x${String(n).repeat(40)}`, '--plan', 'starter', '--nodes', 'eth-1:full'],
    env,
  )
  t.equal(out.code, 0, out.stderr)
  return out.last.apiKey
}
const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'eth_chainId', params: [] })
const hugeBatch = Array.from({ length: 10_000 }, (_, i) => call(i))

t.test('over HTTP: refused requests leave the whole rate', async (t) => {
  const apiKey = await account(7)
  const url = gw.url('eth-1')
  t.equal((await rpc(url, hugeBatch.slice(0, 5_000), { apiKey })).status, 413, 'a batch over maxBatch')
  t.equal((await rpc(url, hugeBatch, { apiKey })).status, 413, 'a body over maxBodyBytes')
  t.equal((await rpc(url, '{"jsonrpc":', { apiKey })).json.error.code, -32700, 'bad JSON')
  t.equal((await rpc(url, '[]', { apiKey })).json.error.code, -32600, 'an empty batch')
  // No wait for a refill: a new key's bucket starts full (one second of the rate) and never holds
  // more, so the 60 calls below are all served only if the refusals above took nothing from it.
  // (A wait here let a refill hide a refusal charged up to a second of the rate.)
  const statuses = await Promise.all(Array.from({ length: RPS }, (_, i) => rpc(url, call(i), { apiKey }).then((r) => r.status)))
  t.same([...new Set(statuses)], [200], `the ${RPS} calls of a full second are all served`)
})

t.test('over WebSocket: a refused batch of 10,000 is one message', async (t) => {
  const apiKey = await account(8)
  const ws = await connectWs(`${gw.ws}/ws/eth-1?apikey=${apiKey}`)
  t.teardown(() => ws.close())
  // The refusal is one error object with a null id (not a batch answer), so it is read off the messages.
  ws.send(hugeBatch)
  await until(() => ws.messages.length > 0, 5_000)
  t.equal(ws.messages[0]?.error?.code, -32011, 'the batch is refused as too large')
  // No wait for a refill, as above: the key's buckets start full, so the next calls are all served
  // only if the refused batch was not charged as its 10,000 calls.
  const answers = await Promise.all(Array.from({ length: RPS / 2 }, (_, i) => ws.call(call(100 + i))))
  t.same(
    answers.filter((a) => a.result !== '0x7a69').map((a) => a.error?.message),
    [],
    'the next calls are all served, none throttled',
  )
})
