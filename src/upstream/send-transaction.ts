import { keccak256 } from 'viem/utils'
import type { NodeKind } from '../core/node-kind.js'
import { isUpstreamFailure, NoHealthyUpstream } from './errors.js'
import type { UpstreamPool } from './pool.js'
import { Answer } from './answer.js'

/**
 * How each client says it already has this transaction: the hash is the answer, no lookup needed.
 *
 * | client | wording | source |
 * |---|---|---|
 * | geth, Erigon, reth | `already known` | geth core/txpool/errors.go ErrAlreadyKnown; Erigon's txpool and reth keep geth's words |
 * | anvil | `transaction already imported` (-32003) | seen from anvil 1.7 (a pending transaction sent again) |
 * | Besu | `Known transaction` | Besu RpcErrorType ETH_SEND_TX_ALREADY_KNOWN |
 * | Nethermind | `AlreadyKnown` | Nethermind AcceptTxResult.AlreadyKnown |
 * | Hardhat 3 (EDR) | `Known transaction: 0x…` (-32000) | seen from Hardhat 3.18, EDR 0.22 (a pending transaction sent again, automine off) |
 * | others | `already exists`, `already in (mem)pool` | wordings of pools of L2 clients |
 */
const ALREADY_KNOWN = /already known|already imported|known transaction|alreadyknown|already exists|already in (?:the )?(?:mem)?pool/i
/**
 * How each client says the nonce is used or the transaction is not taken, which is also what it
 * says to this very transaction sent again: the hash is the answer only when a node knows this
 * transaction (eth_getTransactionByHash), else the node's error goes to the client as it is (another
 * transaction took the nonce, or the fee is too low).
 *
 * | client | wording | source |
 * |---|---|---|
 * | geth, reth, anvil, Besu | `nonce too low` (Besu: `Nonce too low`) | geth core/error.go ErrNonceTooLow; Besu RpcErrorType NONCE_TOO_LOW; seen from anvil 1.7 (a mined transaction sent again) |
 * | Nethermind | `OldNonce` | Nethermind AcceptTxResult.OldNonce |
 * | others | `nonce is too low`, `nonce has already been used` | wordings of L2 clients |
 * | Ganache 7 | `the tx doesn't have the correct nonce. account has nonce of: N tx has nonce of: M` (-32000) | seen from Ganache 7.9.2 (its words for a nonce too low or too high) |
 * | Ganache 7, geth | `transaction underpriced` (-32003 on Ganache) | seen from Ganache 7.9.2 (a re-send that meets its own pooled copy); geth core/txpool/errors.go ErrUnderpriced |
 * | geth, Besu | `replacement transaction underpriced` | geth core/txpool/errors.go ErrReplaceUnderpriced; Besu ETH_SEND_TX_REPLACEMENT_UNDERPRICED |
 * | Hardhat 3 (EDR) | `Nonce too low. Expected nonce to be N but got M.…` (-32000), `Replacement transaction underpriced. A gasPrice/maxFeePerGas of at least …` (-32000) | seen from Hardhat 3.18, EDR 0.22 (a mined transaction sent again; another transaction of a pooled one's nonce and fees) |
 */
const USED_OR_NOT_TAKEN = /nonce too low|nonce is too low|oldnonce|nonce has already been used|the tx doesn't have the correct nonce|transaction underpriced/i

/** Transactions whose hash the gateway answered in place of a failure, for /metrics. */
export interface SendCounters {
  /** A node said "already known" (or "nonce too low" for this transaction, mined or pooled). */
  alreadyKnown: number
  /** The first node failed after it may have got it: another node knew it, or took it. */
  recovered: number
  /** Sent to every healthy node of the kind at once (networks.<slug>.broadcastTransactions). */
  broadcast: number
}

/** What one node made of a transaction sent to it: accepted (its hash answers), or its error answer. */
type Outcome = { accepted: true; answer: Answer } | { accepted: false; answer: Answer }

/**
 * eth_sendRawTransaction that never makes a client believe a transaction failed when it was in
 * fact accepted. Its hash (keccak-256 of the raw bytes) identifies it on every node, so:
 * - a node that answers "already known" (a retry, a second gateway, a resend below) gets the
 *   hash answered, as a node that had not seen it before would have;
 * - "nonce too low" (or a client's other words for a used nonce, or an underpriced copy of
 *   itself: USED_OR_NOT_TAKEN) answers the hash when a node knows this very transaction (it was
 *   mined, or is pooled); otherwise another transaction took the nonce and the node's error goes
 *   to the client as is;
 * - when the node fails after it may have received it (time-out, reset), the other nodes are
 *   asked whether they know it; if none does, it goes to another node: the same bytes are the
 *   same transaction, so this can never make two of it.
 */
export class TransactionSender {
  readonly counters: SendCounters = { alreadyKnown: 0, recovered: 0, broadcast: 0 }
  /** Networks whose transactions go to every healthy node of the kind (broadcastTransactions). */
  #broadcast = new Set<string>()

  /** Send the transactions of these networks to every healthy node of the kind (the config's broadcastTransactions). */
  broadcastOn(networks: Iterable<string>): void {
    // Replaced, not added to: a reload may turn a network's broadcast off.
    this.#broadcast = new Set(networks)
  }

  async send(pool: UpstreamPool, kind: NodeKind, params: unknown, idJson: string, timeoutMs: number): Promise<Answer> {
    const raw = Array.isArray(params) ? params[0] : undefined
    const call = (avoid?: ReadonlySet<string>) => pool.call({ kind, method: 'eth_sendRawTransaction', params, idJson, timeoutMs, avoid })
    if (typeof raw !== 'string' || !/^0x(?:[0-9a-fA-F]{2})+$/.test(raw)) return call() // the node says what is wrong
    const hash = keccak256(raw as `0x${string}`)
    const answerHash = (node: string): Answer => Answer.ofText(`{"jsonrpc":"2.0","id":${idJson},"result":"${hash}"}`, false, node, kind)
    if (this.#broadcast.has(pool.network)) {
      const nodes = pool.nodes().filter((n) => n.kind === kind && n.healthy())
      if (nodes.length > 1) return this.#toEvery(pool, kind, nodes, params, idJson, timeoutMs, hash, answerHash)
    }

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
    if (ALREADY_KNOWN.test(message) || (USED_OR_NOT_TAKEN.test(message) && (await this.#knownBy(pool, kind, hash, timeoutMs)) !== undefined)) {
      this.counters.alreadyKnown++
      return answerHash(reply.node)
    }
    return reply
  }

  /**
   * The transaction to each of `nodes` at once: the first that accepts it answers (its hash; an
   * "already known" counts, as below), the others finish in the background. When none accepts:
   * a node's error answer (the transaction is bad), else, when a node failed after it may have
   * got it, the hash if a node knows it, else the first failure.
   */
  #toEvery(
    pool: UpstreamPool,
    kind: NodeKind,
    nodes: readonly { name: string }[],
    params: unknown,
    idJson: string,
    timeoutMs: number,
    hash: string,
    answerHash: (node: string) => Answer,
  ): Promise<Answer> {
    this.counters.broadcast++
    // One lookup for every node that answers "nonce too low": each asking every node whether it
    // knows the transaction made a broadcast to N nodes cost N² lookups (docs/costs.md). The sends
    // are concurrent, so one answer serves them all: a node that accepts answers the client anyway.
    let lookup: Promise<string | undefined> | undefined
    const knownBy = (): Promise<string | undefined> => (lookup ??= this.#knownBy(pool, kind, hash, timeoutMs))
    const outcomes = nodes.map((n) => this.#sendTo(pool, kind, n.name, params, idJson, timeoutMs, answerHash, knownBy))
    return new Promise<Answer>((resolve, reject) => {
      let left = outcomes.length
      let settled = false
      const refusals: Answer[] = []
      const failures: unknown[] = []
      const noneAccepted = async (): Promise<Answer> => {
        if (refusals.length > 0) return refusals[0]
        const sent = failures.find((err) => isUpstreamFailure(err) && err.requestSent)
        const knower = sent === undefined ? undefined : await this.#knownBy(pool, kind, hash, timeoutMs)
        if (knower === undefined) throw failures[0]
        this.counters.recovered++
        return answerHash(knower)
      }
      const settle = (): void => {
        if (--left > 0 || settled) return
        settled = true
        noneAccepted().then(resolve, reject)
      }
      for (const outcome of outcomes) {
        outcome.then(
          (o) => {
            if (o.accepted && !settled) {
              settled = true
              resolve(o.answer)
            } else if (!o.accepted) refusals.push(o.answer)
            settle()
          },
          (err: unknown) => {
            failures.push(err)
            settle()
          },
        )
      }
    })
  }

  /** The transaction to one node: accepted (the answer the client gets) or refused (its error answer). */
  async #sendTo(
    pool: UpstreamPool,
    kind: NodeKind,
    node: string,
    params: unknown,
    idJson: string,
    timeoutMs: number,
    answerHash: (node: string) => Answer,
    knownBy: () => Promise<string | undefined>,
  ): Promise<Outcome> {
    const reply = await pool.call({ kind, method: 'eth_sendRawTransaction', params, idJson, timeoutMs, node })
    if (!reply.isError) return { accepted: true, answer: reply }
    const message = errorText(reply.text)
    if (ALREADY_KNOWN.test(message) || (USED_OR_NOT_TAKEN.test(message) && (await knownBy()) !== undefined)) {
      this.counters.alreadyKnown++
      return { accepted: true, answer: answerHash(reply.node) }
    }
    return { accepted: false, answer: reply }
  }

  /** The name of a healthy node that knows the transaction (pending or mined), if any. */
  async #knownBy(pool: UpstreamPool, kind: NodeKind, hash: string, timeoutMs: number): Promise<string | undefined> {
    const nodes = pool.nodes().filter((n) => n.kind === kind && n.healthy())
    const answers = await Promise.all(
      nodes.map(async (n) => {
        try {
          const r = await pool.call({
            kind,
            method: 'eth_getTransactionByHash',
            params: [hash],
            idJson: '0',
            timeoutMs: Math.min(timeoutMs, 5_000),
            node: n.name,
          })
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
