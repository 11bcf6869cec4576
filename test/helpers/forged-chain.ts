import type { Anvil } from '../../harness/anvil.js'
import { headerHash } from '../../src/proofs/header.js'
import type { RpcHeader } from '../../src/proofs/rpc-shapes.js'
import type { FaultProxy } from './fault-proxy.js'

/** Blocks a liar serves in place of the chain's: each hashes to its own hash, and each links to the one below. */
export interface ForgedChain {
  /** The forged block's hash at each forged number. */
  readonly hashes: Map<number, string>
  /** The chain's own hash at each forged number (what an honest node answers). */
  readonly honest: ReadonlyMap<number, string>
}

type Block = RpcHeader & { transactions: Array<string | { hash: string; blockHash: string }> }

/**
 * Make the proxy a liar that serves another chain from block `from` up to `to`: each of those
 * blocks re-made with other extra data and its parent the forged block below (the block under
 * `from` is the chain's own), every hash recomputed, so each forged header checks (verifyHeader)
 * and links by parent hashes: only agreement can tell it from the chain's. The transactions are
 * the chain's, placed in the forged blocks. `eth_getBlockByNumber` (numbers and `latest`, when the
 * head is forged) and `eth_getBlockByHash` answer the forged blocks; every other call is the
 * node's own.
 * @example
 * const forged = await forgeChain(anvil, liar, head - 3, head)
 * // a verified read at head - 2 must never be answered at forged.hashes.get(head - 2)
 */
export async function forgeChain(anvil: Anvil, proxy: FaultProxy, from: number, to: number): Promise<ForgedChain> {
  const byNumber = new Map<number, { full: Block; hashes: Block }>()
  const byHash = new Map<string, { full: Block; hashes: Block }>()
  const hashes = new Map<number, string>()
  const honest = new Map<number, string>()
  let parentHash = (await anvil.rpc('eth_getBlockByNumber', [`0x${(from - 1).toString(16)}`, false])).result.hash as string
  for (let n = from; n <= to; n++) {
    const real = (await anvil.rpc('eth_getBlockByNumber', [`0x${n.toString(16)}`, true])).result as Block
    honest.set(n, real.hash)
    const header = { ...real, parentHash, extraData: '0x6c696172' } as Block
    const hash = headerHash(header)
    const full = { ...header, hash, transactions: real.transactions.map((tx) => (typeof tx === 'string' ? tx : { ...tx, blockHash: hash })) } as Block
    const forged = { full, hashes: { ...full, transactions: full.transactions.map((tx) => (typeof tx === 'string' ? tx : tx.hash)) } as Block }
    byNumber.set(n, forged)
    byHash.set(hash, forged)
    hashes.set(n, hash)
    parentHash = hash
  }
  const pick = (forged: { full: Block; hashes: Block } | undefined, full: unknown, result: unknown) =>
    forged === undefined ? result : full === true ? forged.full : forged.hashes
  proxy.set('eth_getBlockByNumber', {
    alter: (result, call) => {
      const [block, full] = call.params as [string, boolean]
      const n = block === 'latest' ? Number((result as { number?: string } | null)?.number ?? -1) : Number.parseInt(block, 16)
      return pick(byNumber.get(n), full, result)
    },
  })
  proxy.set('eth_getBlockByHash', {
    alter: (result, call) => {
      const [hash, full] = call.params as [string, boolean]
      return pick(byHash.get(hash.toLowerCase()), full, result)
    },
  })
  return { hashes, honest }
}
