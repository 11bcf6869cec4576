import { verifyMerkleProof } from '@ethereumjs/mpt'
import { bytesToHex, hexToBytes } from 'viem'
import { KECCAK256_RLP } from '@ethereumjs/util'
import { ProofError } from './errors.js'
import { keccak256Bytes } from './keccak.js'
import type { Hex } from './rpc-shapes.js'

/** The root of an empty trie (keccak-256 of rlp('')): an account without storage has it, an empty block's lists too. */
export const EMPTY_TRIE_ROOT: Hex = bytesToHex(KECCAK256_RLP)

/** What a proof is of, for the error that names it: an account's (state trie) or a slot's (storage trie). */
export interface ProofSubject {
  check: 'ACCOUNT_PROOF' | 'STORAGE_PROOF'
  /** The account address, or `<address> slot <key>`. */
  subject: string
}

/**
 * The value a Merkle Patricia proof (EIP-1186 `accountProof` or a `storageProof[i].proof`) proves
 * for `key` under `root` in a secure trie (keys are keccak-256 hashed, as the state and storage
 * tries are): its RLP-encoded leaf value, or null when the proof shows the key absent. The walk is
 * @ethereumjs/mpt's: every node is looked up by its hash starting from `root`, so a node altered,
 * left out, or taken from another trie (another block's) breaks the path and is refused.
 * @throws ProofError when the nodes do not lead from `root` to a leaf or a proven absence
 * @example
 * const leaf = await provenTrieValue(header.stateRoot, proof.address, proof.accountProof, { check: 'ACCOUNT_PROOF', subject: proof.address })
 */
export async function provenTrieValue(root: Hex, key: Hex, proof: readonly Hex[], what: ProofSubject): Promise<Uint8Array | null> {
  // Under the empty trie's root nothing is stored, whatever nodes come beside it: geth sends none,
  // anvil sends the empty node itself (0x80), which the trie cannot walk as a node.
  if (root.toLowerCase() === EMPTY_TRIE_ROOT) return null
  let nodes: Uint8Array[]
  try {
    nodes = proof.map((node) => hexToBytes(node))
  } catch (cause) {
    throw new ProofError(what.check, what.subject, root, { cause })
  }
  try {
    // The key is hashed here, not by the trie (useKeyHashing), so that what is looked up is visible.
    return await verifyMerkleProof(keccak256Bytes(hexToBytes(key)), nodes, { root: hexToBytes(root), useKeyHashingFunction: keccak256Bytes })
  } catch (cause) {
    throw new ProofError(what.check, what.subject, root, { cause })
  }
}
