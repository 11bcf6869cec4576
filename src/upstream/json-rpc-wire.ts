import { MalformedResponse } from './errors.js'
import { paramsJson } from '../rpc/params-json.js'
import {
  CLOSE_BRACE,
  COMMA,
  OPEN_BRACKET,
  QUOTE,
  arrayItemSpans,
  scanTopLevel,
  skipScalar,
  skipString,
  skipValue,
  skipWhitespace,
  type Span,
} from '../rpc/json-scan.js'

/**
 * JSON-RPC as it crosses the wire to a node and back, as text: the request text of a call or a
 * batch (our ids), the head of an answer (its id, and whether it is an error) read without
 * parsing the result, a batch answer split into its elements, and the client's id put in place of
 * ours. The id is rewritten without re-serialising the answer: the client must get the node's
 * bytes (docs/architecture.md, "Transparent"), and JSON.parse + stringify of a multi-megabyte
 * block-receipts answer would cost more than the whole rest of the call.
 */

/** The head of a node's answer, read without parsing the result. */
export interface ResponseHead {
  id: number | string | null
  /** The answer carries a top-level `error` member (a JSON-RPC error the node returned). */
  isError: boolean
}

const HEAD_JSONRPC_FIRST = '{"jsonrpc":"2.0","id":'
const HEAD_ID_FIRST = '{"id":'
const JSONRPC_MEMBER = ',"jsonrpc":"2.0"'

/**
 * Returns the node's response object text with its top-level `id` value replaced by
 * `clientIdJson`; every other byte is the node's.
 *
 * @param responseText one JSON-RPC response object as the node sent it
 * @param clientIdJson the client's id as JSON text: `1`, `"abc"`, `null`
 * @throws MalformedResponse when the text is not a JSON object
 * @example spliceId('{"jsonrpc":"2.0","id":7,"result":"0x1"}', '"a"') // '{"jsonrpc":"2.0","id":"a","result":"0x1"}'
 */
export function spliceId(responseText: string, clientIdJson: string): string {
  const span = fastIdSpan(responseText) ?? scanTopLevel(responseText)?.id
  if (span !== undefined) {
    return responseText.slice(0, span.start) + clientIdJson + responseText.slice(span.end)
  }
  // No top-level id found by the scan (none at all, or a layout the scan refuses): let the
  // JSON parser decide. This re-serialises, which is acceptable for answers this odd.
  const obj = parseObject(responseText)
  obj.id = JSON.parse(clientIdJson)
  return JSON.stringify(obj)
}

/**
 * Reads the top-level `id` and whether the answer is a JSON-RPC error, without parsing the
 * result. Used by the WebSocket transport to route a reply to its pending call.
 *
 * @throws MalformedResponse when the text is not a JSON object
 */
export function readResponseHead(responseText: string): ResponseHead {
  const fast = fastIdSpan(responseText)
  const isError = fast === undefined ? undefined : errorAfterId(responseText, fast.end)
  if (isError !== undefined) return { id: idValue(responseText, fast!), isError }
  const scan = scanTopLevel(responseText)
  if (scan !== undefined) {
    return {
      id: scan.id === undefined ? null : idValue(responseText, scan.id),
      isError: scan.error !== undefined && responseText.slice(scan.error.start, scan.error.end) !== 'null',
    }
  }
  const obj = parseObject(responseText)
  return { id: asId(obj.id), isError: obj.error !== undefined && obj.error !== null }
}

/**
 * The items of the top-level `result` array of a response, as [start, end) spans of the text, so
 * that answers can be merged (eth_getLogs chunks) without re-serialising a byte of them.
 * Undefined when the answer has no result array (an error, or another kind of result).
 */
export function resultArrayItems(responseText: string): Span[] | undefined {
  const span = scanTopLevel(responseText)?.result
  if (span === undefined || responseText.charCodeAt(span.start) !== OPEN_BRACKET) return undefined
  return arrayItemSpans(responseText, span.start)
}

/**
 * The common layouts, `{"jsonrpc":"2.0","id":<v>,` and `{"id":<v>,`, checked in the first bytes of
 * the object whose `{` is at `at` (0: the text is the answer; an element of a batch answer is read
 * where it lies in the whole answer). The span is in `text`'s positions.
 */
function fastIdSpan(text: string, at = 0): Span | undefined {
  let start: number
  if (text.startsWith(HEAD_JSONRPC_FIRST, at)) start = at + HEAD_JSONRPC_FIRST.length
  else if (text.startsWith(HEAD_ID_FIRST, at)) start = at + HEAD_ID_FIRST.length
  else return undefined
  const first = text.charCodeAt(start)
  let end: number
  if (first === QUOTE) end = skipString(text, start)
  // Only a number or null here: an object or array id (not valid JSON-RPC) goes to the full scan,
  // since skipScalar would stop at a comma inside it.
  else if (first === 0x2d || (first >= 0x30 && first <= 0x39) || first === 0x6e) end = skipScalar(text, start)
  else return undefined
  if (end <= start) return undefined
  const next = text.charCodeAt(end)
  return next === COMMA || next === CLOSE_BRACE ? { start, end } : undefined
}

/**
 * After an id found by fastIdSpan, the member the common layouts put next (past a `"jsonrpc"`
 * member): `result` (false), `error` (true); undefined for any other, which the full scan reads.
 */
function errorAfterId(text: string, idEnd: number): boolean | undefined {
  const after = text.startsWith(JSONRPC_MEMBER, idEnd) ? idEnd + JSONRPC_MEMBER.length : idEnd
  if (text.startsWith(',"result":', after)) return false
  if (text.startsWith(',"error":', after)) return true
  return undefined
}

function idValue(text: string, span: Span): number | string | null {
  // Digits only, few enough to be exact (the ids we send): read where they lie, no copy to parse.
  if (span.end > span.start && span.end - span.start <= 15) {
    let id = 0
    let i = span.start
    for (; i < span.end; i++) {
      const c = text.charCodeAt(i)
      if (c < 0x30 || c > 0x39) break
      id = id * 10 + (c - 0x30)
    }
    if (i === span.end) return id
  }
  const raw = text.slice(span.start, span.end)
  if (text.charCodeAt(span.start) !== QUOTE && raw !== 'null') {
    const n = Number(raw)
    if (!Number.isNaN(n)) return n
  }
  try {
    return asId(JSON.parse(raw))
  } catch (cause) {
    throw new MalformedResponse(`unreadable id ${raw.slice(0, 40)}`, { cause })
  }
}

function asId(v: unknown): number | string | null {
  return typeof v === 'number' || typeof v === 'string' ? v : null
}

function parseObject(text: string): Record<string, unknown> {
  let obj: unknown
  try {
    obj = JSON.parse(text)
  } catch (cause) {
    throw new MalformedResponse(`not JSON: ${text.slice(0, 80)}`, { cause })
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    throw new MalformedResponse(`not a JSON object: ${text.slice(0, 80)}`)
  }
  return obj as Record<string, unknown>
}

/**
 * The elements of a batch answer (a JSON array) as the node's own text, without parsing them.
 * Undefined when the text is not an array (a node may answer a whole batch with one error object).
 * The request path uses splitBatchHeads, which also reads each head; this plain split is what its
 * test holds it to.
 */
export function splitBatch(text: string): string[] | undefined {
  return arrayItemSpans(text, skipWhitespace(text, 0))?.map((span) => text.slice(span.start, span.end))
}

/** One element of a node's batch answer: its text, its head, and where its id lies in that text. */
export interface BatchAnswerItem {
  readonly text: string
  readonly id: number | string | null
  readonly isError: boolean
  /** Where the id's value lies in `text` (for spliceIdAt); undefined when the head was read the general way. */
  readonly idSpan?: Span
}

/**
 * splitBatch and readResponseHead of each element, in one pass: each head in the common layouts
 * is read where the element lies in the node's whole text, without a copy of it to read (reading
 * 50 heads from their copies was half the cost of taking a batch answer apart), and its id's span
 * kept for spliceIdAt; any other element is read by readResponseHead. An element whose head
 * cannot be read is left out: its call is then sent again on its own. Undefined when the text is
 * not an array.
 */
export function splitBatchHeads(text: string): BatchAnswerItem[] | undefined {
  const spans = arrayItemSpans(text, skipWhitespace(text, 0))
  if (spans === undefined) return undefined
  const items: BatchAnswerItem[] = []
  for (let k = 0; k < spans.length; k++) {
    const { start, end } = spans[k]
    const item = text.slice(start, end)
    const fast = fastIdSpan(text, start)
    const isError = fast === undefined ? undefined : errorAfterId(text, fast.end)
    if (isError !== undefined) {
      items.push({ text: item, id: idValue(text, fast!), isError, idSpan: { start: fast!.start - start, end: fast!.end - start } })
      continue
    }
    try {
      const head = readResponseHead(item)
      items.push({ text: item, id: head.id, isError: head.isError })
    } catch {
      // Unreadable: left out.
    }
  }
  return items
}

/** spliceId where the id's span is already known (splitBatchHeads): the text with `clientIdJson` in place of the id. */
export function spliceIdAt(text: string, idSpan: Span, clientIdJson: string): string {
  return text.slice(0, idSpan.start) + clientIdJson + text.slice(idSpan.end)
}

/** The id of the first element of a batch answer (the WebSocket transport routes the whole batch by it). */
export function batchHeadId(text: string): number | string | null | undefined {
  let i = skipWhitespace(text, 0)
  if (text.charCodeAt(i) !== OPEN_BRACKET) return undefined
  i = skipWhitespace(text, i + 1)
  const end = skipValue(text, i)
  if (end <= i) return undefined
  try {
    return readResponseHead(text.slice(i, end)).id
  } catch {
    return undefined
  }
}

/**
 * The head of an answer still in bytes, read from its first bytes only (the common layouts put
 * the id first), so that a 1 MB answer is neither decoded nor copied to route it. `span` is where
 * the id's bytes are, for spliceIdBytes. Any other layout is decoded and read as text.
 * @throws MalformedResponse when the answer is not a JSON object
 */
export function readResponseHeadBytes(bytes: Buffer): ResponseHead & { span?: Span } {
  // Latin-1 maps each byte to one character, so offsets in this prefix are byte offsets; the
  // JSON structure is ASCII, and bytes of multi-byte characters (>= 0x80) can never look like it.
  const prefix = bytes.toString('latin1', 0, Math.min(bytes.length, HEAD_PREFIX_BYTES))
  const span = fastIdSpan(prefix)
  const isError = span === undefined || !isAscii(prefix, span) ? undefined : errorAfterId(prefix, span.end)
  if (isError !== undefined) return { id: idValue(prefix, span!), isError, span }
  return readResponseHead(bytes.toString('utf8'))
}

/**
 * An answer as the pieces it is made of (a spliced head, then the node's bytes as they came),
 * sent to the client one after the other: a 1 MB answer given to sixteen clients is never copied
 * for each of them, only its first bytes are.
 */
export type ByteChunks = readonly Buffer[]

/** The bytes of all the chunks. */
export function byteLength(chunks: ByteChunks): number {
  let n = 0
  for (const c of chunks) n += c.length
  return n
}

/** The chunks as one buffer (one copy, none for a single chunk): for what must read the answer whole. */
export function joined(chunks: ByteChunks): Buffer {
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks as Buffer[])
}

/**
 * spliceId on bytes: the node's answer with its top-level id replaced by the client's, as chunks:
 * a new head (the bytes before the id, the client's id, and the rest of the first
 * HEAD_PREFIX_BYTES, so that the head alone can be spliced again) followed by the node's own bytes,
 * not copied. Falls back to spliceId on the decoded text for layouts the head reader does not know.
 */
export function spliceIdBytes(bytes: Buffer | ByteChunks, clientIdJson: string): Buffer[] {
  const chunks = Buffer.isBuffer(bytes) ? [bytes] : bytes
  const spliced = spliceHead(chunks[0], clientIdJson)
  if (spliced !== undefined) return chunks.length === 1 ? spliced : [...spliced, ...chunks.slice(1)]
  // The id not within the first chunk (a first socket read of a few bytes): read joined.
  const whole = joined(chunks)
  return (chunks.length > 1 ? spliceHead(whole, clientIdJson) : undefined) ?? [Buffer.from(spliceId(whole.toString('utf8'), clientIdJson), 'utf8')]
}

/** The first chunk spliced, when its first bytes show the id in a common layout: [new head, the rest of the chunk]. */
function spliceHead(first: Buffer, clientIdJson: string): Buffer[] | undefined {
  const prefixEnd = Math.min(first.length, HEAD_PREFIX_BYTES)
  const prefix = first.toString('latin1', 0, prefixEnd)
  const span = fastIdSpan(prefix)
  if (span === undefined || !isAscii(prefix, span)) return undefined
  const head = Buffer.concat([first.subarray(0, span.start), Buffer.from(clientIdJson, 'utf8'), first.subarray(span.end, prefixEnd)])
  return prefixEnd < first.length ? [head, first.subarray(prefixEnd)] : [head]
}

/** How much of an answer the byte-level head reader looks at (an id of ours is a few digits). */
const HEAD_PREFIX_BYTES = 256

function isAscii(text: string, span: Span): boolean {
  for (let i = span.start; i < span.end; i++) if (text.charCodeAt(i) >= 0x80) return false
  return true
}

/** A call of an upstream batch; `paramsJson`, when given, is its params already written as JSON. */
export interface BatchCall {
  readonly method: string
  readonly params: unknown
  readonly paramsJson?: string
}

/** The JSON text of one call with our id (its params' JSON when already written). */
export function callText(id: number, method: string, params: unknown, json?: string): string {
  return `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${json ?? paramsJson(params)}}`
}

/** The JSON text of calls as a batch with consecutive ids from `firstId`. */
export function batchText(calls: ReadonlyArray<BatchCall>, firstId: number): string {
  let text = '['
  for (let i = 0; i < calls.length; i++) {
    if (i > 0) text += ','
    const c = calls[i]
    text += callText(firstId + i, c.method, c.params, c.paramsJson)
  }
  return text + ']'
}
