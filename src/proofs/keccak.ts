import { createKeccak } from 'hash-wasm'
import type { Hex } from './rpc-shapes.js'

/**
 * keccak-256 for every check of src/proofs: in WebAssembly (hash-wasm), 1.6 µs for a 532-byte
 * trie node where the pure-JS keccak of viem and @ethereumjs (@noble/hashes) took 25.8 µs; a
 * proof's nodes, a header, each transaction and each receipts trie are hashed on the call path
 * (bench/README.md, "Verified reads"). One hasher, reused: JavaScript runs one call at a time and
 * a digest is a copy.
 */
const hasher = await createKeccak(256)

/** keccak-256 of `data`, as 32 new bytes. */
export function keccak256Bytes(data: Uint8Array): Uint8Array {
  hasher.init()
  hasher.update(data)
  return hasher.digest('binary')
}

/** keccak-256 of `data`, as lowercase 0x-hex. */
export function keccak256Hex(data: Uint8Array): Hex {
  hasher.init()
  hasher.update(data)
  return `0x${hasher.digest('hex')}`
}
