import t from 'tap'
import { createPublicClient, webSocket } from 'viem'
import { WebSocketProvider } from 'ethers'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { deployTransferEmitter, TRANSFER_TOPIC } from '../helpers/transfer-emitter.js'
import { metric, until } from '../helpers/metrics.js'

// viem's and ethers' WebSocket providers, pointed at the gateway, work as they do against a node.
const {
  anvil,
  tg,
  key: { apiKey },
  wsUrl,
} = await anvilGateway(t, { anvil: { blockTime: 1 } })
const url = `${wsUrl}?apikey=${apiKey}`

/** viem's types lose the transport type through createPublicClient here; poll: false is what makes it subscribe. */
function subscribed<T>(params: { poll: false } & Record<string, unknown>): T {
  return params as T
}

/** Resolves with the first `n` values `subscribe` hands to its callback, or rejects after 15 s. */
function collect<T>(n: number, subscribe: (push: (v: T) => void) => () => void): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const got: T[] = []
    let stop: () => void = () => {}
    const timer = setTimeout(() => {
      stop()
      reject(new Error(`only ${got.length} of ${n} values within 15 s`))
    }, 15_000)
    stop = subscribe((v) => {
      got.push(v)
      if (got.length === n) {
        clearTimeout(timer)
        stop()
        resolve(got)
      }
    })
  })
}

t.test('viem: calls, a block-number subscription and a contract event watch over webSocket()', async (t) => {
  const transport = webSocket(url)
  const client = createPublicClient({ transport })
  t.teardown(async () => {
    const rpcClient = await client.transport.getRpcClient()
    rpcClient.close()
  })
  t.equal(await client.getChainId(), 31337)
  t.type(await client.getBlockNumber({ cacheTime: 0 }), 'bigint')
  const numbers = await collect<bigint>(2, (push) => client.watchBlockNumber(subscribed({ poll: false, onBlockNumber: push })))
  t.ok(numbers[1] > numbers[0], `block numbers rise: ${numbers.join(', ')}`)

  const emitter = await deployTransferEmitter(anvil)
  const logs = collect<any>(1, (push) => client.watchEvent({ address: emitter.address as `0x${string}`, poll: false, onLogs: (ls) => ls.forEach(push) }))
  // The watch subscribes asynchronously: emit once the gateway holds the subscription.
  t.ok(await until(async () => (await metric(tg.gateway.admin, 'tollgate_ws_upstream_subscriptions', { network: 'eth-1', kind: 'logs' })) === 1))
  const tx = await emitter.emit()
  const [log] = await logs
  t.equal(log.transactionHash, tx)
  t.same(log.topics, [TRANSFER_TOPIC])
})

t.test('ethers: calls and block events over WebSocketProvider', async (t) => {
  const provider = new WebSocketProvider(url)
  t.teardown(() => provider.destroy())
  t.equal((await provider.getNetwork()).chainId, 31337n)
  t.type(await provider.getBlockNumber(), 'number')
  const blocks = await collect<number>(2, (push) => {
    void provider.on('block', push)
    return () => void provider.off('block', push)
  })
  t.ok(blocks[1] > blocks[0], `blocks rise: ${blocks.join(', ')}`)
  const balance = await provider.getBalance('0x' + '00'.repeat(20))
  t.type(balance, 'bigint')
})
