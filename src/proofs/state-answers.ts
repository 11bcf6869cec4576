import { bytesToHex, numberToHex } from 'viem'
import { checkFailure } from './check-failure.js'
import { data } from './hex-fields.js'
import { keccak256Hex } from './keccak.js'
import type { Hex } from './rpc-shapes.js'
import { type ProvenAccount, slotKey } from './state-proof.js'

/**
 * The answers of the state reads, made from a proven account in the exact format an honest node
 * answers them (geth, reth, anvil alike): quantities without leading zeros ("0x0" for zero),
 * storage words as 32 bytes, code as lowercase hex ("0x" for none). The gateway hands on a node's
 * answer, never one of its own (docs/verified-answers.md): these are what that answer must equal, byte for
 * byte, or what is served in its place only where the method's answer is a pure function of the
 * proven state, which each of these is.
 */

/**
 * eth_getBalance's answer.
 * @example balanceAnswer(account) // '0x21e19e0c9bab2400000'
 */
export function balanceAnswer(account: ProvenAccount): Hex {
  return numberToHex(account.balance)
}

/**
 * eth_getTransactionCount's answer (the account's nonce).
 * @example transactionCountAnswer(account) // '0x1'
 */
export function transactionCountAnswer(account: ProvenAccount): Hex {
  return numberToHex(account.nonce)
}

/**
 * eth_getStorageAt's answer for a slot the proof covered: the value as a 32-byte word.
 * @throws RangeError when the slot was not among the proof's storage keys (ask for it in eth_getProof)
 * @example storageAtAnswer(account, '0x0') // '0x000…02a'
 */
export function storageAtAnswer(account: ProvenAccount, slot: Hex): Hex {
  const value = account.storage.get(slotKey(slot))
  if (value === undefined) throw new RangeError(`slot ${slot} of ${account.address} was not proven: include it in eth_getProof's storage keys`)
  return numberToHex(value, { size: 32 })
}

/**
 * Check code against a proven account's code hash, and give eth_getCode's answer.
 * @throws VerificationError CODE_HASH when keccak-256 of the code is not the proven code hash
 * @example codeAnswer(await node.rpc('eth_getCode', [address, blockHash]), account) // '0x6080…'
 */
export function codeAnswer(code: Hex, account: ProvenAccount): Hex {
  const bytes = data(code, 'CODE_HASH', `${account.address} code`)
  const hash = keccak256Hex(bytes)
  if (hash !== account.codeHash) throw checkFailure('CODE_HASH_DIFFERS', { address: account.address, codeHash: account.codeHash, hash })
  return bytesToHex(bytes)
}
