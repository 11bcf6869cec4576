import { MerklePatriciaTrie } from '@ethereumjs/mpt'
import { RLP } from '@ethereumjs/rlp'
import { bytesToHex } from 'viem'
import { keccak256Bytes } from './keccak.js'
import type { Hex } from './rpc-shapes.js'

/**
 * The root of a list as a block commits to it (transactions, receipts, withdrawals): a Merkle
 * Patricia trie whose key for the i-th item is rlp(i) and whose value is the item's encoding.
 * The trie is @ethereumjs/mpt's, in memory, thrown away after the call.
 * @example
 * await orderedTrieRoot([]) // '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421' (the empty trie)
 * await orderedTrieRoot(transactions.map(encodeTransaction)) === block.transactionsRoot
 */
export async function orderedTrieRoot(items: readonly Uint8Array[]): Promise<Hex> {
  const trie = new MerklePatriciaTrie({ useKeyHashingFunction: keccak256Bytes })
  // Keys in rlp order would be faster to insert, but the trie's root does not depend on the order:
  // plain index order keeps this obviously the list's.
  for (let i = 0; i < items.length; i++) await trie.put(RLP.encode(i), items[i]!)
  return bytesToHex(trie.root())
}
