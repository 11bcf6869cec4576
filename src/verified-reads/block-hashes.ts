import type { EVMMockBlockchainInterface } from '@ethereumjs/evm'
import { checkFailure } from '../proofs/check-failure.js'
import { hexBytes } from '../proofs/hex-fields.js'
import type { Hex } from '../proofs/rpc-shapes.js'
import { type HeaderSource, walkDown } from './header-walk.js'
import type { TrustedHeader } from './trusted-headers.js'

/** The blocks below its own that BLOCKHASH can read (the EVM answers 0 for any other). */
const BLOCKHASH_WINDOW = 256

/**
 * The block hashes a run on proven state reads with BLOCKHASH: those of the blocks below the
 * trusted header, linked to it by parent hashes (the trusted header names its parent's hash; that
 * parent's header, fetched from a node, must hash to it and names its own parent's; and so on
 * down, in upstream batches: header-walk.ts). No node can forge a link. The EVM asks only within
 * its window of 256 blocks; the walk goes down once per run, as far as the lowest block asked.
 * @example
 * const evm = await createEVM({ common, stateManager, blockchain: new ProvenBlockHashes(source, trusted) })
 */
export class ProvenBlockHashes implements EVMMockBlockchainInterface {
  readonly #hashes = new Map<number, Hex>()
  /** The lowest block linked so far, and its parent's hash (where the next walk starts). */
  #lowest: { number: number; parentHash: Hex }

  constructor(
    private readonly source: HeaderSource,
    private readonly trusted: TrustedHeader,
  ) {
    this.#lowest = { number: trusted.number, parentHash: trusted.header.parentHash.toLowerCase() as Hex }
  }

  async getBlock(number: number): Promise<{ hash(): Uint8Array }> {
    const below = this.trusted.number - number
    if (below < 1 || below > BLOCKHASH_WINDOW) throw new RangeError(`BLOCKHASH of block ${number} from block ${this.trusted.number}: outside the EVM's window`)
    if (number < this.#lowest.number) {
      const reached = await walkDown(this.source, this.#lowest.parentHash, this.#lowest.number - 1, number, (n, hash) => this.#hashes.set(n, hash))
      if (typeof reached !== 'string') {
        throw checkFailure('NOT_LINKED_TO_TRUSTED_BLOCK', { block: reached.unlinked, expected: reached.expected, trusted: this.trusted.hash })
      }
      this.#lowest = { number, parentHash: reached }
    }
    const hash = hexBytes(this.#hashes.get(number)!)!
    return { hash: () => hash }
  }

  /** A run adds no block. */
  async putBlock(): Promise<void> {}

  shallowCopy(): this {
    return this
  }
}
