import t from 'tap'
import type { Anvil } from '../../harness/anvil.js'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { rpc } from '../helpers/gateway.js'

// A node killed in the middle of traffic costs no client a failed read: its calls (in flight over
// its WebSocket or HTTP) are carried by the other node.
const {
  anvils,
  tg,
  key: { apiKey },
} = await anvilGateway(t, { anvils: 2, names: ['a', 'b'] })
const [a] = anvils as [Anvil, Anvil]
await tg.gateway.upstreams.waitForSockets(5_000)

const READS: Array<[string, unknown[]]> = [
  ['eth_blockNumber', []],
  ['eth_getBalance', ['0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266', 'latest']],
  ['eth_getBlockByNumber', ['latest', false]],
  ['eth_gasPrice', []],
]

t.test('reads during the kill all succeed', async (t) => {
  const failures: string[] = []
  let answered = 0
  let killed = false
  const client = async (c: number): Promise<void> => {
    for (let i = 0; i < 60; i++) {
      const [method, params] = READS[(c + i) % READS.length]
      const res = await rpc(tg.url('eth-1'), { jsonrpc: '2.0', id: i, method, params }, { apiKey })
      if (res.status !== 200 || res.json?.error !== undefined || res.json?.result === undefined)
        failures.push(`${method}: ${res.status} ${res.text.slice(0, 120)}`)
      answered++
      // The kill lands while the eight clients have calls in flight.
      if (!killed && answered >= 100) {
        killed = true
        void a.kill()
      }
    }
  }
  await Promise.all(Array.from({ length: 8 }, (_, c) => client(c)))
  t.ok(killed, 'node a was killed mid-traffic')
  t.equal(answered, 480)
  t.same(failures, [], 'no client saw a failed read')
  const [nodeA] = tg.gateway.upstreams.pool('eth-1')!.nodes()
  t.notOk(nodeA.up(), 'node a is out')
})
