import {
  encodeDeployData,
  encodeFunctionData,
  erc6492SignatureValidatorAbi,
  erc6492SignatureValidatorByteCode,
  hashMessage,
  hexToBool,
  isAddressEqual,
  isErc6492Signature,
  parseAbi,
  recoverMessageAddress,
  type Hex,
} from 'viem'
import type { ChainRpc } from '../chain/chain-rpc.js'
import { ChainRpcError } from '../chain/errors.js'
import { SiweError } from '../accounts/errors.js'
import type { SignerKind } from '../accounts/wallet.js'

const HEX = /^0x[0-9a-fA-F]*$/
/** Longest signature accepted: an ERC-6492 wrapper carries a factory call (init code), a few KB. */
const MAX_SIGNATURE_CHARS = 40_000
const ERC1271_ABI = parseAbi(['function isValidSignature(bytes32 hash, bytes signature) view returns (bytes4)'])
/** What isValidSignature returns for a valid signature (its own selector). */
const ERC1271_MAGIC = '0x1626ba7e'

/** How a signature is checked: through which node, and what a contract's check may cost. */
export interface SignatureCheck {
  /** Our own node of the message's chain (its time-out bounds each call); undefined: no such chain here. */
  rpc: ChainRpc | undefined
  /** Gas cap of the eth_call that runs a contract wallet's check. */
  gas: number
  /** Called before each eth_call that runs a contract's code for us; throws to refuse it (a rate limit). */
  beforeContractCall(): void
  /**
   * Called once before our node is asked anything (a signature that is not the address's own
   * ECDSA one: a contract wallet's, or junk); throws to refuse (the wallet's sign-in limit).
   */
  beforeNodeCheck?(): void
}

/**
 * Check that `address` signed `message` (EIP-191 personal_sign), spending on our node only what a
 * contract wallet needs:
 * - an EOA by secp256k1 recovery, locally: a signature by the address needs no node at all;
 * - otherwise the address's code (eth_getCode, which runs nothing): none means an EOA whose
 *   signature did not match, refused without an eth_call (viem's verifyMessage would run the
 *   ERC-6492 validator on the node for every junk signature);
 * - a deployed contract wallet by ERC-1271 `isValidSignature`, an undeployed one (an ERC-6492
 *   wrapped signature) by the ERC-6492 validator in a deployless eth_call: each with a gas cap,
 *   after `beforeContractCall` (the caller's rate limit of such checks).
 * Resolves with who vouched for it: a contract's word holds on its chain only (the same address
 * on another chain may be another contract, or another owner's).
 * @throws SiweError BAD_SIGNATURE, WRONG_CHAIN, or CHAIN_UNAVAILABLE when the node could not be asked
 */
export async function verifySiweSignature(check: SignatureCheck, address: `0x${string}`, message: string, signature: string): Promise<SignerKind> {
  if (typeof signature !== 'string' || !HEX.test(signature) || signature.length < 4 || signature.length > MAX_SIGNATURE_CHARS) {
    throw new SiweError('BAD_SIGNATURE', 'the signature is not a hex string')
  }
  const { rpc } = check
  if (rpc === undefined) throw new SiweError('WRONG_CHAIN', 'the message is for a chain this gateway has no node for')
  const sig = signature as Hex
  const gas = `0x${check.gas.toString(16)}`
  if (!isErc6492Signature(sig) && (await recoversTo(address, message, sig))) return 'eoa'
  check.beforeNodeCheck?.()
  if (isErc6492Signature(sig)) {
    check.beforeContractCall()
    const data = encodeDeployData({
      abi: erc6492SignatureValidatorAbi,
      args: [address, hashMessage(message), sig],
      bytecode: erc6492SignatureValidatorByteCode,
    })
    const result = await ask(rpc, 'eth_call', [{ data, gas }, 'latest'])
    if (result instanceof ChainRpcError || !asBool(result)) throw badSignature(result)
    return 'contract'
  }
  const code = await ask(rpc, 'eth_getCode', [address, 'latest'])
  if (code instanceof ChainRpcError) throw unavailable(code)
  if (code === '0x' || code === '0x0') throw badSignature()
  check.beforeContractCall()
  const data = encodeFunctionData({ abi: ERC1271_ABI, functionName: 'isValidSignature', args: [hashMessage(message), sig] })
  const result = await ask(rpc, 'eth_call', [{ to: address, data, gas }, 'latest'])
  if (result instanceof ChainRpcError || !result.toLowerCase().startsWith(ERC1271_MAGIC)) throw badSignature(result)
  return 'contract'
}

async function recoversTo(address: `0x${string}`, message: string, signature: Hex): Promise<boolean> {
  try {
    return isAddressEqual(await recoverMessageAddress({ message, signature }), address)
  } catch {
    return false // not a 65-byte ECDSA signature: a contract wallet's own format, maybe
  }
}

/**
 * The call's result, or the node's JSON-RPC error (for an eth_call: a revert, out of gas);
 * throws CHAIN_UNAVAILABLE when no node answered in time.
 */
async function ask(rpc: ChainRpc, method: string, params: unknown[]): Promise<string | ChainRpcError> {
  try {
    return String(await rpc.request<string>(method, params))
  } catch (cause) {
    if (cause instanceof ChainRpcError) return cause
    throw unavailable(cause)
  }
}

function asBool(result: string): boolean {
  try {
    return hexToBool(result as Hex)
  } catch {
    return false
  }
}

function badSignature(cause?: unknown): SiweError {
  return new SiweError('BAD_SIGNATURE', 'the signature does not match the wallet address', cause instanceof Error ? { cause } : undefined)
}

function unavailable(cause: unknown): SiweError {
  return new SiweError('CHAIN_UNAVAILABLE', 'the signature could not be checked: the node of that chain did not answer; try again', { cause })
}
