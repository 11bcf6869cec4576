import { RLP } from '@ethereumjs/rlp'
import { createAccountFromRLP, KECCAK256_NULL } from '@ethereumjs/util'
import { bytesToBigInt, bytesToHex, numberToHex } from 'viem'
import { checkFailure } from './check-failure.js'
import { hexData, quantity } from './hex-fields.js'
import type { Hex, RpcAccountProof } from './rpc-shapes.js'
import { EMPTY_TRIE_ROOT, provenTrieValue } from './trie-proof.js'

/** keccak-256 of no bytes: the code hash of an account without code. */
export const EMPTY_CODE_HASH: Hex = bytesToHex(KECCAK256_NULL)
const ZERO_HASH: Hex = `0x${'00'.repeat(32)}`

/** An account's state as proven against a state root: what eth_getBalance and the others answer from. */
export interface ProvenAccount {
  /** The state root it was proven against. */
  stateRoot: Hex
  /** Lowercase. */
  address: Hex
  /** False when the proof shows no account at this address (then all below are the empty account's). */
  exists: boolean
  nonce: bigint
  balance: bigint
  storageHash: Hex
  codeHash: Hex
  /** Proven slot values by slot (32-byte lowercase hex); an absent slot is 0n. */
  storage: ReadonlyMap<Hex, bigint>
}

/** What was asked of eth_getProof: the answer must be of this address and these slots, in this order. */
export interface ProofRequest {
  address: Hex
  storageKeys: readonly Hex[]
}

/**
 * A storage slot as the 32-byte lowercase hex a storage trie is keyed by (before hashing): nodes
 * accept "0x0" and "0x00…00" for the same slot.
 * @example slotKey('0x1') // '0x0000…0001'
 */
export function slotKey(slot: Hex): Hex {
  return numberToHex(quantity(slot, 'STORAGE_PROOF', 'storage key'), { size: 32 })
}

/**
 * Check an `eth_getProof` answer against a trusted block's `stateRoot`: the account proof leads to
 * a leaf that is exactly the answer's nonce, balance, storageHash and codeHash (or shows the account
 * absent, and then the answer must claim the empty account), and each storage proof leads from the
 * answer's storageHash to the claimed value (absent slot: 0).
 * @throws VerificationError ACCOUNT_PROOF or STORAGE_PROOF naming the field or slot, expected and got
 * @example
 * const account = await verifyStateProof(answer, header.stateRoot, { address, storageKeys: [] })
 * balanceAnswer(account) // '0x21e19e0c9bab2400000', as eth_getBalance answers
 */
export async function verifyStateProof(answer: RpcAccountProof, stateRoot: Hex, request?: ProofRequest): Promise<ProvenAccount> {
  const address = hexData(answer.address, 'ACCOUNT_PROOF', 'address', 20)
  if (request && request.address.toLowerCase() !== address)
    throw checkFailure('PROOF_OF_ANOTHER_ADDRESS', { asked: request.address.toLowerCase(), proven: address })
  const claimed = {
    nonce: quantity(answer.nonce, 'ACCOUNT_PROOF', 'nonce'),
    balance: quantity(answer.balance, 'ACCOUNT_PROOF', 'balance'),
    storageHash: hexData(answer.storageHash, 'ACCOUNT_PROOF', 'storageHash', 32),
    codeHash: hexData(answer.codeHash, 'ACCOUNT_PROOF', 'codeHash', 32),
  }
  const leaf = await provenTrieValue(stateRoot, address, answer.accountProof, { check: 'ACCOUNT_PROOF', subject: address })

  let proven: { nonce: bigint; balance: bigint; storageHash: Hex; codeHash: Hex }
  if (leaf === null) {
    proven = { nonce: 0n, balance: 0n, storageHash: EMPTY_TRIE_ROOT, codeHash: EMPTY_CODE_HASH }
    // Nodes differ on the hashes of an absent account (geth: the empty ones; some: zeros); both say "none".
    if (claimed.storageHash === ZERO_HASH) claimed.storageHash = EMPTY_TRIE_ROOT
    if (claimed.codeHash === ZERO_HASH) claimed.codeHash = EMPTY_CODE_HASH
  } else {
    let account: ReturnType<typeof createAccountFromRLP>
    try {
      account = createAccountFromRLP(leaf)
    } catch (cause) {
      throw checkFailure('ACCOUNT_LEAF_NOT_ACCOUNT', { address, leaf: bytesToHex(leaf) }, { cause })
    }
    proven = { nonce: account.nonce, balance: account.balance, storageHash: bytesToHex(account.storageRoot), codeHash: bytesToHex(account.codeHash) }
  }
  for (const field of ['nonce', 'balance', 'storageHash', 'codeHash'] as const) {
    if (proven[field] !== claimed[field])
      throw checkFailure('ACCOUNT_FIELD_DIFFERS', { address, field, proven: String(proven[field]), claimed: String(claimed[field]) })
  }

  const answered = answer.storageProof ?? []
  if (request && (request.storageKeys.length !== answered.length || request.storageKeys.some((k, i) => slotKey(k) !== slotKey(answered[i]!.key)))) {
    throw checkFailure('STORAGE_KEYS_DIFFER', { address, asked: request.storageKeys, answered: answered.map((p) => p.key) })
  }
  const storage = new Map<Hex, bigint>()
  for (const entry of answered) {
    const slot = slotKey(entry.key)
    const subject = `${address} slot ${slot}`
    const value = quantity(entry.value, 'STORAGE_PROOF', `${subject} value`)
    // The slot is proven against the storage root the account proof just proved, never the answer's word alone.
    const stored = await provenTrieValue(proven.storageHash, slot, entry.proof, { check: 'STORAGE_PROOF', subject })
    const provenValue = stored === null ? 0n : storedValue(stored, subject)
    if (provenValue !== value) throw checkFailure('STORAGE_VALUE_DIFFERS', { slot: subject, proven: numberToHex(provenValue), claimed: numberToHex(value) })
    storage.set(slot, provenValue)
  }
  return { stateRoot: stateRoot.toLowerCase() as Hex, address, exists: leaf !== null, ...proven, storage }
}

/** A storage leaf is rlp(value as minimal big-endian bytes). */
function storedValue(leaf: Uint8Array, subject: string): bigint {
  const decoded = RLP.decode(leaf)
  if (!(decoded instanceof Uint8Array)) throw checkFailure('STORAGE_LEAF_NOT_BYTES', { slot: subject, leaf: bytesToHex(leaf) })
  return decoded.length === 0 ? 0n : bytesToBigInt(decoded)
}
