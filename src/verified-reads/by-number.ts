import type { NodeKind } from '../core/node-kind.js'
import type { Answer } from '../upstream/answer.js'
import type { PoolCallOptions, UpstreamPool } from '../upstream/pool.js'
import { PASSED_OVER_BECAUSE } from '../errors/problem-words.js'
import { VerificationError } from '../proofs/errors.js'
import { PassOver } from './errors.js'
import { nodesLackOf, type VerifyNeed } from './nodes-lack.js'
import type { TrustedHeader } from './trusted-headers.js'

/**
 * The same call of the same node with the header's number for its block: some nodes refuse a block
 * named by hash (Ganache 7.9.2 answers eth_getProof and eth_getCode with `{blockHash}` -32700
 * "Cannot wrap a "object" as a json-rpc type"), and their error was handed on as the answer to
 * eth_getBalance or a verified eth_call. By number the node may answer for another block than the
 * trusted one: check what it gives with ofTrustedBlock.
 * @example const numbered = await askedByNumber(pool, kind, 'eth_getProof', [address, slots], header, answer.node, opts)
 */
export async function askedByNumber(
  pool: UpstreamPool,
  kind: NodeKind,
  method: string,
  params: unknown[],
  header: TrustedHeader,
  node: string,
  opts: PoolCallOptions,
): Promise<Answer> {
  const numbered = await pool.call({ ...opts, kind, method, params: [...params, `0x${header.number.toString(16)}`], idJson: '0', node, checked: true })
  // Answered by number where by hash it erred: the block's form is what it lacks (for /metrics).
  if (!numbered.isError) nodesLackOf(pool).saw(numbered.node, `${method} by blockHash` as VerifyNeed)
  return numbered
}

/**
 * Check an answer a node gave by number. One that fails is a failed check only when the node's
 * own block at that number is the trusted block: a node that moved to another branch (a reorg it
 * saw first or last) answered truly for another block, and is passed over for this read, not
 * counted. The price: one more header call, and only when a check failed.
 * @example return ofTrustedBlock(pool, kind, header, numbered.node, opts, () => proven(numbered))
 */
export async function ofTrustedBlock<T>(
  pool: UpstreamPool,
  kind: NodeKind,
  header: TrustedHeader,
  node: string,
  opts: PoolCallOptions,
  check: () => Promise<T>,
): Promise<T> {
  try {
    return await check()
  } catch (err) {
    if (!(err instanceof VerificationError) && !(err instanceof SyntaxError)) throw err
    const its = await pool.call({
      ...opts,
      kind,
      method: 'eth_getBlockByNumber',
      params: [`0x${header.number.toString(16)}`, false],
      idJson: '0',
      node,
      checked: true,
    })
    const hash = its.isError ? undefined : (JSON.parse(its.text) as { result?: { hash?: string } | null }).result?.hash
    if (typeof hash === 'string' && hash.toLowerCase() === header.hash.toLowerCase()) throw err
    throw new PassOver(PASSED_OVER_BECAUSE.OTHER_BLOCK({ number: header.number, hash, trusted: header.hash }))
  }
}
