import { createMPT, type MerklePatriciaTrie, updateMPTFromMerkleProof } from '@ethereumjs/mpt'
import { KECCAK256_RLP, MapDB, ValueEncoding } from '@ethereumjs/util'
import { bytesToHex } from 'viem'
import { checkFailure } from './check-failure.js'
import { hexBytes } from './hex-fields.js'
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
 * A trie to walk one proof in, held by one check at a time: its nodes live in a Map of ours,
 * emptied before and after each proof, so no proof is walked with another's nodes. A trie per
 * proof (what @ethereumjs/mpt's verifyMerkleProof makes) costs more than the walk of a short proof:
 * its constructor makes a `debug` logger (a tty check, a system call) and reads the environment.
 */
interface ScratchTrie {
  trie: MerklePatriciaTrie
  nodes: Map<string, Uint8Array>
}
/** Scratch tries not in use; more are made while more checks are under way at once. */
const idle: ScratchTrie[] = []
/** Idle scratch tries kept for the next checks (the most proofs checked at once, in the usual case). */
const IDLE_KEPT = 32

async function scratchTrie(): Promise<ScratchTrie> {
  const kept = idle.pop()
  if (kept !== undefined) return kept
  const nodes = new Map<string, Uint8Array>()
  const trie = await createMPT({ db: new MapDB(nodes), valueEncoding: ValueEncoding.Bytes, useKeyHashingFunction: keccak256Bytes })
  return { trie, nodes }
}

/**
 * The value a Merkle Patricia proof (EIP-1186 `accountProof` or a `storageProof[i].proof`) proves
 * for `key` under `root` in a secure trie (keys are keccak-256 hashed, as the state and storage
 * tries are): its RLP-encoded leaf value, or null when the proof shows the key absent. The walk is
 * @ethereumjs/mpt's (what its verifyMerkleProof does, in a trie reused): the first node must hash
 * to `root`, and every node is looked up by its hash from there, so a node altered, left out, or
 * taken from another trie (another block's) breaks the path and is refused.
 * @throws ProofError when the nodes do not lead from `root` to a leaf or a proven absence
 * @example
 * const leaf = await provenTrieValue(header.stateRoot, proof.address, proof.accountProof, { check: 'ACCOUNT_PROOF', subject: proof.address })
 */
export async function provenTrieValue(root: Hex, key: Hex, proof: readonly Hex[], what: ProofSubject): Promise<Uint8Array | null> {
  // Under the empty trie's root nothing is stored, whatever nodes come beside it: geth sends none,
  // anvil sends the empty node itself (0x80), which the trie cannot walk as a node.
  if (root.toLowerCase() === EMPTY_TRIE_ROOT) return null
  const nodes: Uint8Array[] = []
  for (const node of proof) {
    const bytes = typeof node === 'string' ? hexBytes(node) : undefined
    if (bytes === undefined)
      throw checkFailure('PROOF_NOT_LINKED', { ...what, root }, { cause: new Error(`a proof node is not hex: ${JSON.stringify(node)?.slice(0, 80)}`) })
    nodes.push(bytes)
  }
  const rootBytes = hexBytes(root)
  const keyBytes = hexBytes(key)
  if (rootBytes === undefined || keyBytes === undefined)
    throw checkFailure('PROOF_NOT_LINKED', { ...what, root }, { cause: new Error('the root or the key is not hex') })
  const scratch = await scratchTrie()
  try {
    scratch.nodes.clear()
    scratch.trie.root(rootBytes)
    // Nodes are stored by their own hash; the first must be the root's (shouldVerifyRoot).
    await updateMPTFromMerkleProof(scratch.trie, nodes, true)
    // The key is hashed here, not by the trie (useKeyHashing is off), so that what is looked up is visible.
    return await scratch.trie.get(keccak256Bytes(keyBytes), true)
  } catch (cause) {
    throw checkFailure('PROOF_NOT_LINKED', { ...what, root }, { cause })
  } finally {
    scratch.nodes.clear()
    if (idle.length < IDLE_KEPT) idle.push(scratch)
  }
}
