import { createPublicClient, createWalletClient, encodeAbiParameters, http, parseUnits, type Address, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { TEST_USD_CREATION_CODE } from './contracts/test-usd-code.js'

/**
 * The first accounts of anvil's dev mnemonic ("test test … junk"): public test keys, each funded
 * with 10,000 ETH on a fresh devnet. The first deploys the token; each holds TEST_USD_EACH.
 */
export const DEVNET_KEYS = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
] as const satisfies readonly Hex[]

/** Where payments go on the devnet: anvil's tenth dev account, which holds no test USD, so that a payment is seen arriving. */
export const DEVNET_TREASURY: Address = '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720'

/** The test USD each of the first accounts holds: enough for years of any plan of the catalogs. */
export const TEST_USD_EACH = 1_000_000
/** As USDC and USDT have: what the invoices' amounts are computed with (read from the contract). */
export const TEST_USD_DECIMALS = 6

export interface TestUsd {
  /** The token's address: the same on every fresh devnet (the first transaction of its first account). */
  readonly token: Address
  readonly treasury: Address
}

/**
 * Deploy TestUSD (an OpenZeppelin ERC-20 of 6 decimals, contracts/TestUSD.sol) on a devnet,
 * minting TEST_USD_EACH to each account of DEVNET_KEYS; resolves once it is mined. Run it first
 * on a fresh devnet: the token's address is then the same on each run, so invoices and configs
 * of an earlier run name it rightly.
 * @example
 * const { token, treasury } = await deployTestUsd(devnet)
 */
export async function deployTestUsd(devnet: { url: string; chainId: number }): Promise<TestUsd> {
  const chain = {
    id: devnet.chainId,
    name: 'devnet',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [devnet.url] } },
  } as const
  const deployer = privateKeyToAccount(DEVNET_KEYS[0])
  const holders = DEVNET_KEYS.map((key) => privateKeyToAccount(key).address)
  const args = encodeAbiParameters([{ type: 'address[]' }, { type: 'uint256' }], [holders, parseUnits(String(TEST_USD_EACH), TEST_USD_DECIMALS)])
  const wallet = createWalletClient({ account: deployer, chain, transport: http(devnet.url) })
  const client = createPublicClient({ chain, transport: http(devnet.url) })
  const hash = await wallet.sendTransaction({ data: `${TEST_USD_CREATION_CODE}${args.slice(2)}` as Hex, to: null })
  const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 30_000 })
  if (receipt.status !== 'success' || receipt.contractAddress == null)
    throw new Error(`the test USD token was not deployed on ${devnet.url} (transaction ${hash})`)
  return { token: receipt.contractAddress, treasury: DEVNET_TREASURY }
}
