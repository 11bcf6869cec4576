import type { PublicClient } from 'viem'
import { SiweError } from './siwe-error.js'

const HEX = /^0x[0-9a-fA-F]*$/
/** Longest signature accepted: an ERC-6492 wrapper carries a factory call (init code), a few KB. */
const MAX_SIGNATURE_CHARS = 40_000

/**
 * Check that `address` signed `message` (EIP-191 personal_sign): an EOA by secp256k1 recovery,
 * locally; a contract wallet by ERC-1271 `isValidSignature`, or an undeployed one by ERC-6492
 * (viem's universal validator, a deployless eth_call), through `client`, which must be backed by
 * our own upstream nodes of the message's chain (see chain/chain-rpc.ts).
 * @throws SiweError BAD_SIGNATURE, or CHAIN_UNAVAILABLE when the node could not be asked
 */
export async function verifySiweSignature(client: PublicClient | undefined, address: `0x${string}`, message: string, signature: string): Promise<void> {
  if (typeof signature !== 'string' || !HEX.test(signature) || signature.length < 4 || signature.length > MAX_SIGNATURE_CHARS) {
    throw new SiweError('BAD_SIGNATURE', 'the signature is not a hex string')
  }
  if (client === undefined) throw new SiweError('WRONG_CHAIN', 'the message is for a chain this gateway has no node for')
  let valid: boolean
  try {
    // mode 'eoa': recover locally first, so that the common case needs no node at all.
    valid = await client.verifyMessage({ address, message, signature: signature as `0x${string}`, mode: 'eoa' })
  } catch (cause) {
    throw new SiweError('CHAIN_UNAVAILABLE', 'the signature could not be checked: the node of that chain did not answer; try again', { cause })
  }
  if (!valid) throw new SiweError('BAD_SIGNATURE', 'the signature does not match the wallet address')
}
