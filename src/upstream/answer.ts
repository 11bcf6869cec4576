import type { NodeKind } from '../core/node-kind.js'
import type { Span } from '../rpc/json-scan.js'
import { byteLength, joined, spliceId, spliceIdAt, spliceIdBytes, type ByteChunks } from './json-rpc-wire.js'

/** Who answered when no node did. */
export type NotANode = 'cache' | 'gateway'

/**
 * One JSON-RPC response object on its way to a client: what a node answered (or the cache, or the
 * gateway itself for a call it refused or could not serve). Every step of the call path hands on
 * this one type, from the node through the pool, the upstream caller and the dispatcher to the
 * front end; `withId` is the one way the client's id is put in.
 *
 * A large answer stays the node's bytes all the way: `text` decodes them only when something reads
 * it (a 1 MB answer is never decoded, encoded or joined again on its way out).
 * @example
 * const mine = answer.withId('"abc"')
 * mine.text // '{"jsonrpc":"2.0","id":"abc","result":"0x10"}'
 */
export class Answer {
  #text: string | undefined
  /** The UTF-8 bytes, when the answer was kept as bytes (large answers): send these as they are. */
  readonly bytes: ByteChunks | undefined
  /** HTTP status for a call answered alone: 200 for any JSON-RPC answer; a gateway error's own. */
  status = 200
  /** Answered from the finality-aware cache, or stored in it (the X-Tollgate-Cache header). */
  cache: 'hit' | 'miss' | undefined = undefined
  /** Invalid: the gateway refused the call as malformed or unsupported (-32700, -32600, -32601, -32602) before any node saw it: the WebSocket penalty counts it. A node's answer never sets it. */
  invalid = false
  /** Nodes this call was sent to, failovers, hedges and asks again included (the X-Tollgate-Attempts header). */
  attempts = 1
  /** The agreement consensus reached, `agreeing/participants` (`2/3`), when the network asks for it. */
  consensus: string | undefined = undefined
  /** The hash of the trusted header this answer was proven against (networks.<slug>.verify), for the X-Tollgate-Verified header. */
  verifiedAt: string | undefined = undefined
  /**
   * Units of work the gateway did for this answer beyond its method's own (a verified call's EVM
   * run, by the gas it ran: docs/costs.md), known only once it is answered: charged to the key
   * after the answer and counted in its usage units, alone or in a batch (chargeWork).
   */
  extraUnits = 0

  private constructor(
    text: string | undefined,
    bytes: ByteChunks | undefined,
    /** A JSON-RPC error (returned as the node said it, not a failure). */
    readonly isError: boolean,
    /** The node that answered, or 'cache' / 'gateway'. */
    readonly node: string,
    readonly kind: NodeKind,
    /** Where the id's value lies in `text`, when already found (an element of a batch answer). */
    readonly idSpan?: Span,
  ) {
    this.#text = text
    this.bytes = bytes
  }

  /** An answer as text. */
  static ofText(text: string, isError: boolean, node: string | NotANode, kind: NodeKind, idSpan?: Span): Answer {
    return new Answer(text, undefined, isError, node, kind, idSpan)
  }

  /** An answer kept as the bytes it came in. */
  static ofBytes(bytes: ByteChunks, isError: boolean, node: string, kind: NodeKind): Answer {
    return new Answer(undefined, bytes, isError, node, kind)
  }

  /** The gateway's error for a call (its id in `text`), with the HTTP status it is answered with alone. */
  static gatewayError(text: string, status: number, kind: NodeKind, invalid = false): Answer {
    const a = new Answer(text, undefined, true, 'gateway', kind)
    a.status = status
    a.invalid = invalid
    return a
  }

  /** The answer as text (decoded from the bytes when first read). */
  get text(): string {
    return (this.#text ??= joined(this.bytes!).toString('utf8'))
  }

  /** Its size in bytes for usage: the bytes when kept, else the text's length. */
  get size(): number {
    return this.bytes !== undefined ? byteLength(this.bytes) : this.text.length
  }

  /** The same answer with `idJson` (the client's id, as JSON text) in place of the id it has. */
  withId(idJson: string): Answer {
    const bytes = this.bytes
    const a =
      bytes !== undefined
        ? new Answer(undefined, spliceIdBytes(bytes, idJson), this.isError, this.node, this.kind)
        : new Answer(
            this.idSpan === undefined ? spliceId(this.#text!, idJson) : spliceIdAt(this.#text!, this.idSpan, idJson),
            undefined,
            this.isError,
            this.node,
            this.kind,
          )
    a.status = this.status
    a.cache = this.cache
    a.invalid = this.invalid
    a.attempts = this.attempts
    a.consensus = this.consensus
    a.verifiedAt = this.verifiedAt
    a.extraUnits = this.extraUnits
    return a
  }
}
