import type { NodeKind } from '../core/node-kind.js'
import type { Answer } from '../upstream/answer.js'
import type { UpstreamPool } from '../upstream/pool.js'
import { verifyHeader } from '../proofs/header.js'
import type { Hex, RpcHeader } from '../proofs/rpc-shapes.js'

/** Headers asked of a node in one upstream batch while walking. */
const WALK_BATCH = 100

/** Where a walk asks for headers, and how it counts them. */
export interface HeaderSource {
  pool: UpstreamPool
  timeoutMs: number
  /** Header calls made (the caller's counter, for the cost docs and the tests). */
  counts: { calls: number }
}

/**
 * Walk a chain down by parent hashes: fetch the headers from `top` down to `bottom` (in upstream
 * batches of WALK_BATCH), the one at `top` hashing to `parentHash` and each below to the parent
 * hash of the one above it, and hand each link to `link` as it is made. A node's header that does
 * not link (or none) is asked of every other healthy node: no node can forge one, and one that has
 * the block answers it. Returns the parent hash of the header at `bottom` (`parentHash` itself when
 * there is none to fetch).
 * @returns null when no node has a header at some height that links (the caller says what that means)
 * @example
 * await walkDown(source, trusted.header.parentHash, trusted.number - 1, wanted, (n, hash) => hashes.set(n, hash))
 */
export async function walkDown(
  source: HeaderSource,
  parentHash: Hex,
  top: number,
  bottom: number,
  link: (number: number, hash: Hex, parentHash: Hex) => void,
): Promise<Hex | { unlinked: number; expected: Hex }> {
  let expected = parentHash.toLowerCase() as Hex
  for (let high = top; high >= bottom; high -= WALK_BATCH) {
    const numbers: number[] = []
    for (let n = high; n >= Math.max(bottom, high - WALK_BATCH + 1); n--) numbers.push(n)
    const headers = await headersAt(source, numbers)
    for (const [i, n] of numbers.entries()) {
      let header = headers[i]
      if (hashOf(header) !== expected) header = await linkingFromAny(source, n, expected)
      if (header === undefined) return { unlinked: n, expected }
      const hash = expected
      expected = header.parentHash.toLowerCase() as Hex
      link(n, hash, expected)
    }
  }
  return expected
}

/** The headers at these numbers, from the pool (one upstream batch); undefined where none came. */
export async function headersAt(source: HeaderSource, numbers: number[]): Promise<Array<RpcHeader | undefined>> {
  source.counts.calls += numbers.length
  const kind: NodeKind = source.pool.hasKind('full') ? 'full' : 'archive'
  const calls = numbers.map((n) => ({ method: 'eth_getBlockByNumber', params: [`0x${n.toString(16)}`, false], idJson: '0' }))
  const answers: Array<Answer | undefined> = await source.pool.callBatch(kind, calls, { timeoutMs: source.timeoutMs, checked: true }).catch(() => [])
  return numbers.map((_, i) => headerIn(answers[i]))
}

/** The header at `number` hashing to `expected`, from any healthy node that has it; undefined when none does. */
export async function linkingFromAny(source: HeaderSource, number: number, expected: Hex): Promise<RpcHeader | undefined> {
  for (const node of source.pool.nodes().filter((n) => n.healthy())) {
    source.counts.calls++
    const answer = await source.pool
      .call({
        kind: node.kind,
        method: 'eth_getBlockByNumber',
        params: [`0x${number.toString(16)}`, false],
        idJson: '0',
        node: node.name,
        timeoutMs: source.timeoutMs,
        checked: true,
      })
      .catch(() => undefined)
    const header = headerIn(answer)
    if (header !== undefined && hashOf(header) === expected) return header
  }
  return undefined
}

function headerIn(answer: Answer | undefined): RpcHeader | undefined {
  if (answer === undefined || answer.isError) return undefined
  try {
    return (JSON.parse(answer.text) as { result?: RpcHeader | null }).result ?? undefined
  } catch {
    return undefined
  }
}

/** A header's hash computed from its fields, or undefined when there is none, or its fields do not hash to the hash it claims. */
export function hashOf(header: RpcHeader | undefined): Hex | undefined {
  if (header === undefined) return undefined
  try {
    return verifyHeader(header)
  } catch {
    return undefined
  }
}
