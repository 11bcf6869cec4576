import { type Address, createPublicClient, createWalletClient, encodeFunctionData, erc20Abi, http, keccak256, padHex, sha256, type Hex } from 'viem'
import { type Anvil, startAnvil } from '../../harness/anvil.js'
import { deployLogEmitter } from '../../harness/log-emitter.js'
import { anvilAccount, chainAt, deployToken, transferToken } from './contracts.js'

/** What makeBusyChain left on the node, for the checks to read. */
export interface BusyChain {
  /** An OpenZeppelin ERC-20: storage (total supply at slot 2, balances in mapping slot 0) and Transfer logs. */
  token: Address
  /** A contract that logs its calldata (harness/log-emitter.ts): code, no storage. */
  emitter: Address
  /** A funded account that sent transactions (nonce > 0). */
  eoa: Address
  /** An account that delegated its code to the emitter (EIP-7702): code 0xef0100‖emitter. */
  delegated: Address
  /** An address nothing ever touched. */
  absent: Address
  /** The token's balance slot of `delegated` (set) and a slot never written. */
  slots: { totalSupply: Hex; balanceOfDelegated: Hex; unset: Hex }
  head: number
}

/**
 * A blob transaction anvil accepts without a KZG library: the all-zero blob's commitment and proof
 * are both the point at infinity (0xc0 and 47 zero bytes), whatever the trusted setup.
 */
const INFINITY = `0xc0${'00'.repeat(47)}` as Hex
const ZERO_BLOB = `0x${'00'.repeat(131072)}` as Hex

/**
 * Fill an anvil with a chain that has every transaction type anvil accepts (legacy, 2930, 1559,
 * 4844, 7702), a block of several transactions, contract storage, logs, and empty blocks.
 * @example const busy = await makeBusyChain(anvil)
 */
export async function makeBusyChain(anvil: Anvil): Promise<BusyChain> {
  const chain = {
    id: 31337,
    name: 'anvil',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [anvil.url] } },
  } as const
  // Bounds of a loaded machine, not of anvil's speed: viem's default of 10 s per request failed the
  // blob transaction's send (a 128 KiB sidecar) at a load of 15 on two cores, before any gateway ran,
  // and its retry of a send that anvil took would send it twice. One try, a minute to answer.
  const transport = http(anvil.url, { timeout: 60_000, retryCount: 0 })
  const pub = createPublicClient({ chain, transport })
  const wallet = (i: number) => createWalletClient({ account: anvilAccount(i), chain, transport })
  const mined = (hash: Hex) => pub.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 60_000 })

  const owner = anvilAccount(0)
  const token = await deployToken(chainAt(anvil.url), owner)
  const emitter = (await deployLogEmitter(anvil)).address as Address
  const delegated = anvilAccount(3).address

  // One block of four transactions of three types from four senders: tries of more than one leaf.
  await anvil.rpc('evm_setAutomine', [false])
  const pending = [
    await wallet(1).sendTransaction({ type: 'legacy', to: delegated, value: 1000n }),
    await wallet(2).sendTransaction({
      type: 'eip2930',
      to: emitter,
      data: '0x01',
      accessList: [{ address: emitter, storageKeys: [padHex('0x1', { size: 32 })] }],
    }),
    await wallet(0).sendTransaction({ to: token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [delegated, 5n] }) }),
    await wallet(4).sendTransaction({ to: emitter, data: '0xabcdef' }),
  ]
  await anvil.rpc('evm_mine')
  await anvil.rpc('evm_setAutomine', [true])
  for (const hash of pending) await mined(hash)

  const authorization = await anvilAccount(3).signAuthorization({
    contractAddress: emitter,
    chainId: chain.id,
    nonce: await pub.getTransactionCount({ address: delegated }),
  })
  await mined(await wallet(1).sendTransaction({ authorizationList: [authorization], to: delegated, data: '0x' }))
  await mined(
    await wallet(2).sendTransaction({
      type: 'eip4844',
      to: delegated,
      blobVersionedHashes: [`0x01${sha256(INFINITY).slice(4)}`],
      sidecars: [{ blob: ZERO_BLOB, commitment: INFINITY, proof: INFINITY }],
      maxFeePerBlobGas: 10n ** 10n,
    } as never),
  )
  await transferToken(chainAt(anvil.url), token, owner, anvilAccount(4).address, 7n)
  await anvil.rpc('anvil_mine', ['0x2'])

  // Read fresh: viem caches getBlockNumber for its polling interval (4 s), and the receipts waited
  // for above fill that cache, so a quick run read a head from before the blob transaction's block.
  const head = Number(await pub.getBlockNumber({ cacheTime: 0 }))
  const balanceOfDelegated = keccak256(`${padHex(delegated, { size: 32 })}${padHex('0x0', { size: 32 }).slice(2)}` as Hex)
  return {
    token,
    emitter,
    eoa: owner.address,
    delegated,
    absent: '0x00000000000000000000000000000000000a85e0',
    slots: { totalSupply: padHex('0x2', { size: 32 }), balanceOfDelegated, unset: padHex('0x63', { size: 32 }) },
    head,
  }
}

/**
 * A new anvil (stopped at teardown) with a busy chain, and `call`: a method's result, or a throw
 * naming the method and the node's error (the block and state checks' tests read the node this way).
 * @example const { busy, call } = await busyAnvil(t)
 */
export async function busyAnvil(t: {
  teardown(fn: () => unknown): void
}): Promise<{ anvil: Anvil; busy: BusyChain; call(method: string, params: unknown[]): Promise<any> }> {
  const anvil = await startAnvil()
  t.teardown(() => anvil.stop())
  const busy = await makeBusyChain(anvil)
  const call = async (method: string, params: unknown[]): Promise<any> => {
    const answer = await anvil.rpc(method, params)
    if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`)
    return answer.result
  }
  return { anvil, busy, call }
}
