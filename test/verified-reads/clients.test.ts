import t from 'tap'
import { JsonRpcProvider } from 'ethers'
import { createPublicClient, createWalletClient, erc20Abi, http, parseAbiItem } from 'viem'
import { startAnvil } from '../../harness/anvil.js'
import { makeBusyChain } from '../helpers/busy-chain.js'
import { anvilAccount } from '../helpers/contracts.js'
import { startTestGateway } from '../helpers/gateway.js'

// Real clients through a network that verifies everything it can (verify: "calls"), unchanged:
// viem's public and wallet clients and ethers' provider read, send and wait as against the node.

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
await anvil.rpc('anvil_mine', ['0x46'])
const busy = await makeBusyChain(anvil)
const tg = await startTestGateway(t, {
  networks: {
    'eth-1': {
      chainId: 31337,
      verify: 'calls',
      upstreams: [
        { url: anvil.url, name: 'a', kind: 'full' },
        { url: anvil.url, name: 'b', kind: 'full' },
      ],
    },
  },
  config: { cache: { enabled: false } },
})
const { apiKey } = await tg.createKey('tier-3')
const url = `${tg.url('eth-1')}?apikey=${apiKey}`
const chain = { id: 31337, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } } as const
const direct = createPublicClient({ chain, transport: http(anvil.url) })

t.test('viem: reads, a contract read, a transfer sent and waited for, logs', async (t) => {
  const client = createPublicClient({ chain, transport: http(url) })
  t.equal(await client.getBalance({ address: busy.eoa }), await direct.getBalance({ address: busy.eoa }))
  t.equal(await client.getTransactionCount({ address: busy.eoa }), await direct.getTransactionCount({ address: busy.eoa }))
  t.equal(await client.getCode({ address: busy.token }), await direct.getCode({ address: busy.token }))
  const supply = await client.readContract({ address: busy.token, abi: erc20Abi, functionName: 'totalSupply' })
  t.equal(supply, await direct.readContract({ address: busy.token, abi: erc20Abi, functionName: 'totalSupply' }))
  const wallet = createWalletClient({ account: anvilAccount(4), chain, transport: http(url) })
  const to = anvilAccount(2).address
  const before = await client.getBalance({ address: to })
  const hash = await wallet.sendTransaction({ to, value: 12345n })
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 })
  t.equal(receipt.status, 'success')
  t.equal(await client.getBalance({ address: to, blockNumber: receipt.blockNumber }), before + 12345n, 'the transfer, read at its block')
  const block = await client.getBlock({ blockNumber: receipt.blockNumber, includeTransactions: true })
  t.equal(block.transactions[0]?.hash, hash)
  const transfers = await client.getLogs({
    address: busy.token,
    event: parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)'),
    fromBlock: 0n,
  })
  t.equal(transfers.length, (await direct.getLogs({ address: busy.token, fromBlock: 0n })).length, 'the token’s Transfer logs')
})

t.test('ethers: a balance, a block, a receipt and logs', async (t) => {
  const provider = new JsonRpcProvider(url, 31337, { staticNetwork: true })
  t.teardown(() => provider.destroy())
  const directProvider = new JsonRpcProvider(anvil.url, 31337, { staticNetwork: true })
  t.teardown(() => directProvider.destroy())
  t.equal(await provider.getBalance(busy.eoa), await directProvider.getBalance(busy.eoa))
  const block = await provider.getBlock('latest')
  t.equal(block?.hash, (await directProvider.getBlock(block!.number))?.hash)
  const logs = await provider.getLogs({ address: busy.token, fromBlock: 0 })
  t.equal(logs.length, (await directProvider.getLogs({ address: busy.token, fromBlock: 0 })).length)
  const receipt = await provider.getTransactionReceipt(logs[0]!.transactionHash)
  t.equal(receipt?.blockHash, logs[0]!.blockHash)
})
