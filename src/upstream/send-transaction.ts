import { keccak256 } from 'viem/utils'
import type { NodeKind } from '../events/types.js'
import { isUpstreamFailure, NoHealthyUpstream } from './errors.js'
import type { UpstreamPool } from './pool.js'
import { Answer } from './answer.js'

/** How nodes say they already have a transaction (geth, erigon, nethermind, besu, reth, anvil). */
const ALREADY_KNOWN = /already known|already imported|known transaction|alreadyknown|already exists|already in (?:the )?(?:mem)?pool/i
/** How they say its nonce is used: by this very transaction, mined meanwhile, or by another one. */
const NONCE_TOO_LOW = /nonce too low|nonce is too low|oldnonce|nonce has already been used/i

/** Transactions whose hash the gateway answered in place of a failure, for /metrics. */
export interface SendCounters {
  /** A node said "already known" (or "nonce too low" for this transaction, mined). */
  alreadyKnown: number
  /** The first node failed after it may have got it: another node knew it, or took it. */
  recovered: number
}

/**
 * eth_sendRawTransaction that never makes a client believe a transaction failed when it was in
 * fact accepted. Its hash (keccak-256 of the raw bytes) identifies it on every node, so:
 * - a node that answers "already known" (a retry, a second gateway, a resend below) gets the
 *   hash answered, as a node that had not seen it before would have;
 * - "nonce too low" answers the hash when a node knows this very transaction (it was mined);
 *   otherwise another transaction took the nonce and the node's error goes to the client as is;
 * - when the node fails after it may have received it (time-out, reset), the other nodes are
 *   asked whether they know it; if none does, it goes to another node: the same bytes are the
 *   same transaction, so this can never make two of it.
 */
export class TransactionSender {
  readonly counters: SendCounters = { alreadyKnown: 0, recovered: 0 }

  async send(pool: UpstreamPool, kind: NodeKind, params: unknown, idJson: string, timeoutMs: number): Promise<Answer> {
    const raw = Array.isArray(params) ? params[0] : undefined
    const call = (avoid?: ReadonlySet<string>) => pool.call(kind, 'eth_sendRawTransaction', params, idJson, { timeoutMs, avoid })
    if (typeof raw !== 'string' || !/^0x(?:[0-9a-fA-F]{2})+$/.test(raw)) return call() // the node says what is wrong
    const hash = keccak256(raw as `0x${string}`)
    const answerHash = (node: string): Answer => Answer.ofText(`{"jsonrpc":"2.0","id":${idJson},"result":"${hash}"}`, false, node, kind)

    let reply: Answer
    try {
      reply = await call()
    } catch (err) {
      if (!isUpstreamFailure(err) || !err.requestSent) throw err
      const knower = await this.#knownBy(pool, kind, hash, timeoutMs)
      if (knower !== undefined) {
        this.counters.recovered++
        return answerHash(knower)
      }
      try {
        reply = await call(new Set([err.node]))
      } catch (again) {
        // No other node to take it: the client hears about the first failure, not about the pool.
        throw again instanceof NoHealthyUpstream ? err : again
      }
      this.counters.recovered++
    }
    if (!reply.isError) return reply
    const message = errorText(reply.text)
    if (ALREADY_KNOWN.test(message) || (NONCE_TOO_LOW.test(message) && (await this.#knownBy(pool, kind, hash, timeoutMs)) !== undefined)) {
      this.counters.alreadyKnown++
      return answerHash(reply.node)
    }
    return reply
  }

  /** The name of a healthy node that knows the transaction (pending or mined), if any. */
  async #knownBy(pool: UpstreamPool, kind: NodeKind, hash: string, timeoutMs: number): Promise<string | undefined> {
    const nodes = pool.nodes().filter((n) => n.kind === kind && n.healthy())
    const answers = await Promise.all(
      nodes.map(async (n) => {
        try {
          const r = await pool.call(kind, 'eth_getTransactionByHash', [hash], '0', { timeoutMs: Math.min(timeoutMs, 5_000), node: n.name })
          return !r.isError && !/"result"\s*:\s*null/.test(r.text) ? n.name : undefined
        } catch {
          return undefined
        }
      }),
    )
    return answers.find((name) => name !== undefined)
  }
}

/** The error's message and data, as text to match (nodes put the reason in either). */
function errorText(body: string): string {
  try {
    const error = (JSON.parse(body) as { error?: { message?: unknown; data?: unknown } }).error
    return `${String(error?.message ?? '')} ${error?.data === undefined ? '' : JSON.stringify(error.data)}`
  } catch {
    return ''
  }
}
