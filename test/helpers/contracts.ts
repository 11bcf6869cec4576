import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import {
  concatHex,
  createPublicClient,
  createWalletClient,
  encodeDeployData,
  encodeErrorResult,
  encodeFunctionData,
  erc20Abi,
  getContractAddress,
  http,
  padHex,
  parseUnits,
  type Abi,
  type Address,
  type Hex,
} from 'viem'
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts'

/** anvil's default dev accounts (mnemonic "test test … junk"): funded with 10,000 ETH each. */
export const ANVIL_KEYS = [
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
  '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a',
] as const satisfies readonly Hex[]

export function anvilAccount(i: number): PrivateKeyAccount {
  return privateKeyToAccount(ANVIL_KEYS[i]!)
}

/** The deterministic deployment proxy (CREATE2 factory) that anvil has at genesis. */
export const CREATE2_FACTORY: Address = '0x4e59b44847b379578588920ca78fbf26c0b4956c'

const require = createRequire(import.meta.url)

/**
 * OpenZeppelin 4.9's compiled ERC20PresetFixedSupply (npm @openzeppelin/contracts ships its
 * build artifacts): a real ERC-20 with 18 decimals that mints its whole supply to `owner`.
 */
function ozArtifact(name: string): { abi: unknown[]; bytecode: Hex } {
  return JSON.parse(readFileSync(require.resolve(`@openzeppelin/contracts/build/contracts/${name}.json`), 'utf8'))
}

export interface Chain {
  url: string
  chainId: number
  /** Send a transaction from an anvil account; resolves with its hash once mined (automine). */
  send(from: PrivateKeyAccount, tx: { to?: Address; data: Hex }): Promise<Hex>
  receipt(hash: Hex): Promise<{ contractAddress: Address | null; blockNumber: bigint; status: string }>
}

export function chainAt(url: string, chainId = 31337): Chain {
  const chain = { id: chainId, name: 'anvil', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [url] } } } as const
  const pub = createPublicClient({ chain, transport: http(url) })
  return {
    url,
    chainId,
    async send(from, tx) {
      const wallet = createWalletClient({ account: from, chain, transport: http(url) })
      const hash = await wallet.sendTransaction({ to: tx.to ?? null, data: tx.data } as never)
      await pub.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 15_000 })
      return hash
    },
    async receipt(hash) {
      return pub.getTransactionReceipt({ hash }) as never
    },
  }
}

/** The creation code of an OpenZeppelin ERC-20 whose whole supply (1,000,000 tokens) goes to `owner`. */
export function tokenInitCode(owner: Address, symbol = 'TUSD'): Hex {
  const art = ozArtifact('ERC20PresetFixedSupply')
  return encodeDeployData({ abi: art.abi as Abi, bytecode: art.bytecode, args: [`Test ${symbol}`, symbol, parseUnits('1000000', 18), owner] })
}

/** Deploy a fresh OpenZeppelin ERC-20 whose whole supply (1,000,000 tokens) belongs to `owner`. */
export async function deployToken(chain: Chain, owner: PrivateKeyAccount, symbol = 'TUSD'): Promise<Address> {
  const hash = await chain.send(owner, { data: tokenInitCode(owner.address, symbol) })
  const address = (await chain.receipt(hash)).contractAddress
  if (!address) throw new Error('token deployment failed')
  return address
}

/** Transfer `amount` (smallest unit) of `token` from an account; resolves with the tx hash (mined). */
export function transferToken(chain: Chain, token: Address, from: PrivateKeyAccount, to: Address, amount: bigint): Promise<Hex> {
  return chain.send(from, { to: token, data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] }) })
}

/*
 * A minimal ERC-1271 contract wallet, assembled by hand (there is no Solidity compiler here).
 * isValidSignature(bytes32 hash, bytes signature) returns 0x1626ba7e when
 * ecrecover(hash, v, r, s) of the 65-byte signature is the owner baked into the code, and
 * 0xffffffff otherwise. It reads no selector: it answers every call that way, which is all
 * a signature check needs.
 */
type Op = string | { push: Hex } | { label: string } | { ref: string }

const OPCODES: Record<string, number> = {
  ADD: 0x01,
  EQ: 0x14,
  BYTE: 0x1a,
  SHL: 0x1b,
  CALLDATALOAD: 0x35,
  CODECOPY: 0x39,
  POP: 0x50,
  MLOAD: 0x51,
  MSTORE: 0x52,
  JUMPI: 0x57,
  GAS: 0x5a,
  JUMPDEST: 0x5b,
  DUP1: 0x80,
  RETURN: 0xf3,
  STATICCALL: 0xfa,
}

/** Two passes: label offsets first (every ref is a PUSH1, the code is < 256 bytes), then bytes. */
function assemble(program: Op[]): Hex {
  const size = (op: Op) => (typeof op === 'string' ? 1 : 'push' in op ? 1 + (op.push.length - 2) / 2 : 'ref' in op ? 2 : 1)
  const labels = new Map<string, number>()
  let at = 0
  for (const op of program) {
    if (typeof op === 'object' && 'label' in op) labels.set(op.label, at)
    at += size(op)
  }
  const bytes: number[] = []
  for (const op of program) {
    if (typeof op === 'string') {
      const code = OPCODES[op]
      if (code === undefined) throw new Error(`unknown opcode ${op}`)
      bytes.push(code)
    } else if ('push' in op) {
      const data = Buffer.from(op.push.slice(2), 'hex')
      bytes.push(0x5f + data.length, ...data)
    } else if ('label' in op) bytes.push(OPCODES.JUMPDEST!)
    else bytes.push(0x60, labels.get(op.ref)!)
  }
  return `0x${Buffer.from(bytes).toString('hex')}`
}

const p = (value: number): Op => ({ push: `0x${value.toString(16).padStart(2, '0')}` })

export function erc1271WalletRuntime(owner: Address): Hex {
  return assemble([
    p(0x04),
    'CALLDATALOAD',
    p(0x00),
    'MSTORE', // mem[0x00] = hash
    p(0x24),
    'CALLDATALOAD',
    p(0x04),
    'ADD', // p = 4 + offset of `signature` (its length word)
    'DUP1',
    p(0x20),
    'ADD',
    'CALLDATALOAD',
    p(0x40),
    'MSTORE', // mem[0x40] = r
    'DUP1',
    p(0x40),
    'ADD',
    'CALLDATALOAD',
    p(0x60),
    'MSTORE', // mem[0x60] = s
    p(0x60),
    'ADD',
    'CALLDATALOAD',
    p(0x00),
    'BYTE',
    p(0x20),
    'MSTORE', // mem[0x20] = v (byte 64 of the signature)
    // staticcall(gas, ecrecover precompile 0x01, in 0x00..0x80, out 0x80..0xa0)
    p(0x20),
    p(0x80),
    p(0x80),
    p(0x00),
    p(0x01),
    'GAS',
    'STATICCALL',
    'POP',
    p(0x80),
    'MLOAD',
    { push: owner.toLowerCase() as Hex },
    'EQ',
    { ref: 'valid' },
    'JUMPI',
    { push: '0xffffffff' },
    p(0xe0),
    'SHL',
    p(0x00),
    'MSTORE',
    p(0x20),
    p(0x00),
    'RETURN',
    { label: 'valid' },
    { push: '0x1626ba7e' },
    p(0xe0),
    'SHL',
    p(0x00),
    'MSTORE',
    p(0x20),
    p(0x00),
    'RETURN',
  ])
}

/** Creation code: copy the runtime that follows these 11 bytes to memory and return it. */
export function initCodeOf(runtime: Hex): Hex {
  const length = (runtime.length - 2) / 2
  const prefix = assemble([p(length), 'DUP1', p(0x0b), p(0x00), 'CODECOPY', p(0x00), 'RETURN'])
  if ((prefix.length - 2) / 2 !== 0x0b) throw new Error('init prefix is not 11 bytes')
  return concatHex([prefix, runtime])
}

export function erc1271WalletInitCode(owner: Address): Hex {
  return initCodeOf(erc1271WalletRuntime(owner))
}

/** A "wallet" whose every call loops until it runs out of gas: `JUMPDEST PUSH1 0 JUMP`. */
export const GAS_BURNER_RUNTIME: Hex = '0x5b600056'

/** Deploy `runtime` through anvil's CREATE2 factory; returns its address. */
export async function deployRuntime(chain: Chain, deployer: PrivateKeyAccount, runtime: Hex, salt: Hex = padHex('0x03', { size: 32 })): Promise<Address> {
  const initCode = initCodeOf(runtime)
  await chain.send(deployer, { to: CREATE2_FACTORY, data: concatHex([salt, initCode]) })
  return getContractAddress({ opcode: 'CREATE2', from: CREATE2_FACTORY, salt, bytecode: initCode })
}

/** Deploy the wallet of `owner` through anvil's CREATE2 factory; returns its address. */
export async function deployErc1271Wallet(
  chain: Chain,
  deployer: PrivateKeyAccount,
  owner: Address,
  salt: Hex = padHex('0x01', { size: 32 }),
): Promise<Address> {
  const { factoryData, address } = counterfactualWallet(owner, salt)
  await chain.send(deployer, { to: CREATE2_FACTORY, data: factoryData })
  return address
}

/** Where the wallet of `owner` would be, and the factory call that deploys it (for ERC-6492). */
export function counterfactualWallet(owner: Address, salt: Hex = padHex('0x02', { size: 32 })): { address: Address; factory: Address; factoryData: Hex } {
  const initCode = erc1271WalletInitCode(owner)
  return {
    address: getContractAddress({ opcode: 'CREATE2', from: CREATE2_FACTORY, salt, bytecode: initCode }),
    factory: CREATE2_FACTORY,
    factoryData: concatHex([salt, initCode]),
  }
}

/**
 * Runtime code that reverts every call with `Error(reason)`, as a contract's `require(false, reason)`
 * does: put it at an address with anvil_setCode. The node then answers an eth_call to it with the
 * revert (code 3, "execution reverted: <reason>", the data): words a tenant chose, in a node's error.
 * @example
 * await anvil.rpc('anvil_setCode', [address, revertingCode('method not found')])
 */
export function revertingCode(reason: string): Hex {
  const data = encodeErrorResult({ abi: ERROR_STRING_ABI, errorName: 'Error', args: [reason] })
  const size = (data.length - 2) / 2
  const word = (n: number): string => n.toString(16).padStart(4, '0')
  // PUSH2 size, PUSH2 offset, PUSH1 0, CODECOPY (the revert data into memory), PUSH2 size, PUSH1 0, REVERT; then the data.
  const prefixBytes = 15
  return `0x61${word(size)}61${word(prefixBytes)}600039${'61'}${word(size)}6000fd${data.slice(2)}` as Hex
}

const ERROR_STRING_ABI = [{ type: 'error', name: 'Error', inputs: [{ name: 'reason', type: 'string' }] }] as const
