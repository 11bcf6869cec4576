import { isUtf8 } from 'node:buffer'
import { ERRORS } from '../errors/registry.js'
import {
  BACKSLASH,
  CLOSE_BRACE,
  COLON,
  COMMA,
  OPEN_BRACE,
  QUOTE,
  arrayItemSpans,
  scanTopLevel,
  skipScalar,
  skipString,
  skipWhitespace,
  type Span,
} from './json-scan.js'
import { MAX_ID_LENGTH, MAX_PARAMS_DEPTH, deeperThan } from './request-bounds.js'
import { readCommonLayout } from './common-layout.js'
import { paramsRefusal, paramsRefused } from './params-objects.js'

/**
 * JSON-RPC 2.0 request parsing and checking, as the spec and JSON-RPC 2.0 say. A batch is checked
 * call by call: one bad call becomes one error entry, the others go on.
 *
 * The id of every call is kept as the bytes the client sent (`idJson`), found in the body next to
 * the parsed value: JSON-RPC requires the id back exactly as sent, and a parsed id written out
 * again is not that (an id above 2^53 comes back rounded, `1e3` as `1000`, `-0` as `0`, `"\u0041"`
 * as `"A"`).
 */

export { MAX_ID_LENGTH, MAX_PARAMS_DEPTH } from './request-bounds.js'

/** A call that passed the checks. `idJson` is the request id as JSON text, echoed exactly. */
export interface RpcCall {
  readonly method: string
  readonly params: unknown
  /** undefined: a notification (no id member): forwarded, never answered. */
  readonly idJson: string | undefined
  /**
   * The params as the client wrote them, when the body was read in the common layout: valid JSON
   * (they parsed), sent upstream and used in the keys that make calls alike as they are, instead
   * of JSON.stringify of the parsed value once more (a batch of 50 distinct calls paid it per
   * call). Text with other spacing than JSON.stringify's only makes a key that another spacing of
   * the same params does not meet: a share missed, never a wrong answer. undefined: written with
   * paramsJson() where needed.
   */
  readonly paramsJson?: string | undefined
}

/** A batch entry that failed the checks: answered with this error, never forwarded. */
export interface RpcInvalid {
  readonly invalid: true
  readonly idJson: string
  readonly rpc: number
  readonly message: string
}

export type RpcEntry = RpcCall | RpcInvalid

export type ParsedBody =
  | { kind: 'single'; entry: RpcEntry }
  | { kind: 'batch'; entries: RpcEntry[] }
  | { kind: 'parse-error'; message: string }
  | { kind: 'empty-batch' }

export function isInvalid(e: RpcEntry): e is RpcInvalid {
  return (e as RpcInvalid).invalid === true
}

/**
 * Parse a request body as it came over the wire. Never throws. JSON text must be UTF-8
 * (RFC 8259): a call whose bytes are not is refused (-32600) rather than forwarded with its bad
 * bytes replaced, which would change its params, or its id.
 */
export function parseRpcBytes(bytes: Uint8Array): ParsedBody {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (isUtf8(buf)) return parseRpcBody(buf.toString('utf8'))
  return parseNotUtf8(buf)
}

/** Parse a request body already decoded from valid UTF-8. Never throws. */
export function parseRpcBody(text: string): ParsedBody {
  // The layout every client library writes is read without JSON.parse of the whole body.
  const common = readCommonLayout(text)
  if (common !== undefined) return 'single' in common ? { kind: 'single', entry: common.single } : { kind: 'batch', entries: common.batch }
  return parseAnyLayout(text)
}

/** parseRpcBody for any JSON text: JSON.parse, then each call checked and its id found as sent. */
export function parseAnyLayout(text: string): ParsedBody {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    // Checked only here, off the path of bodies that parse: a BOM is the one invisible reason.
    if (text.charCodeAt(0) === BOM)
      return {
        kind: 'parse-error',
        message: `${ERRORS.PARSE_ERROR.message}: it starts with a byte order mark (EF BB BF); send the JSON without it (RFC 8259, section 8.1)`,
      }
    return { kind: 'parse-error', message: `${ERRORS.PARSE_ERROR.message} (${(err as Error).message})` }
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return { kind: 'empty-batch' }
    const spans = arrayItemSpans(text, skipWhitespace(text, 0))
    const entries = new Array<RpcEntry>(value.length)
    for (let i = 0; i < value.length; i++) {
      const span = spans?.[i]
      entries[i] = span === undefined ? checkRequest(value[i]) : checkRequest(value[i], text, span.start, span.end)
    }
    return { kind: 'batch', entries }
  }
  return { kind: 'single', entry: checkRequest(value, text, 0, text.length) }
}

/**
 * Check one request object. `text`, `start` and `end` are where it was written (whitespace around
 * it allowed), so that its id is echoed as those bytes; without them (a request built in code)
 * the id is written out from its value.
 */
function checkRequest(value: unknown, text?: string, start = 0, end = 0): RpcEntry {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return invalid('null', 'Invalid Request: expected a JSON-RPC request object {"jsonrpc":"2.0","method":...,"params":[...],"id":...}')
  }
  const req = value as Record<string, unknown>
  let idJson: string | undefined
  if (Object.hasOwn(req, 'id')) {
    const id = req.id
    if (id !== null && typeof id !== 'string' && typeof id !== 'number') return invalid('null', 'Invalid Request: "id" must be a string, a number or null')
    idJson = text === undefined ? (JSON.stringify(id) ?? 'null') : rawId(text, start, end, id)
    if (idJson.length > MAX_ID_LENGTH) {
      return invalid(
        'null',
        `Invalid Request: the id is ${idJson.length} characters long, at most ${MAX_ID_LENGTH} are accepted; an id only pairs an answer with its request (a counter or a UUID is enough)`,
      )
    }
  }
  const replyId = idJson ?? 'null'
  if (req.jsonrpc !== '2.0') return invalid(replyId, 'Invalid Request: "jsonrpc" must be exactly "2.0"')
  if (typeof req.method !== 'string' || req.method.length === 0) {
    return invalid(replyId, 'Invalid Request: "method" must be a non-empty string such as "eth_blockNumber"')
  }
  const params = req.params
  if (params !== undefined && (params === null || typeof params !== 'object')) {
    return invalid(replyId, 'Invalid Request: "params" must be an array or an object (use [] when there are none)')
  }
  if (params !== undefined && deeperThan(params, MAX_PARAMS_DEPTH)) {
    return invalid(replyId, `Invalid Request: "params" are nested more than ${MAX_PARAMS_DEPTH} levels deep; no method takes that`)
  }
  const refusal = paramsRefusal(req.method, params)
  if (refusal !== undefined) {
    paramsRefused[refusal.code]++
    return { invalid: true, idJson: replyId, rpc: refusal.rpc, message: refusal.message }
  }
  return { method: req.method, params, idJson, paramsJson: undefined }
}

function invalid(idJson: string, message: string): RpcInvalid {
  return { invalid: true, idJson, rpc: ERRORS.INVALID_REQUEST.rpc, message }
}

const BOM = 0xfeff
const JSONRPC_THEN_ID = '{"jsonrpc":"2.0","id":'
const JSONRPC_LAST = ',"jsonrpc":"2.0"}'
const NOT_UTF8 = 'JSON text must be UTF-8 (RFC 8259); send the body encoded as UTF-8'

/**
 * The id's JSON text in the request object written in text[start, end). The common layouts are
 * read at once, without walking the object: `{"jsonrpc":"2.0","id":…` (viem, web3.js, most
 * examples), `…,"id":…}` and `…,"id":…,"jsonrpc":"2.0"}` (ethers); any other is walked member by
 * member.
 */
function rawId(text: string, start: number, end: number, id: string | number | null): string {
  if (text.startsWith(JSONRPC_THEN_ID, start)) {
    const from = start + JSONRPC_THEN_ID.length
    const to = text.charCodeAt(from) === QUOTE ? skipString(text, from) : skipScalar(text, from)
    const raw = to > from ? text.slice(from, to) : ''
    // An object may name `id` twice, and JSON.parse keeps the last: this one must be it.
    if (raw !== '' && sameId(raw, id)) return raw
  }
  const close = skipWhitespaceBack(text, end - 1)
  const at =
    lastMemberId(text, start, close) ??
    (text.endsWith(JSONRPC_LAST, close + 1) ? lastMemberId(text, start, close + 1 - JSONRPC_LAST.length) : undefined) ??
    scanTopLevel(text, start)?.lastId
  // Not found only in text JSON.parse did not read as this object; kept so that an id is always answered.
  return at === undefined ? (JSON.stringify(id) ?? 'null') : text.slice(at.start, at.end)
}

/** Whether the JSON text `raw` is the id JSON.parse gave (a string, number or null). */
function sameId(raw: string, id: string | number | null): boolean {
  if (typeof id === 'string') {
    if (raw.charCodeAt(0) !== QUOTE) return false
    // An escape is always longer than what it stands for: equal lengths and equal characters mean no escapes.
    if (raw.length - 2 === id.length && raw.startsWith(id, 1)) return true
    return JSON.parse(raw) === id
  }
  if (id === null) return raw === 'null'
  return Number(raw) === id
}

/**
 * The value of the member that ends just before the structural `,` or `}` at `after`, when that
 * member is `"id"`, read backwards. Called for the object's last member (the one JSON.parse kept
 * when `id` is named twice) and for the one before a final `"jsonrpc":"2.0"`; the object's `{` is
 * the first character at or after `open` that is not whitespace.
 */
function lastMemberId(text: string, open: number, after: number): Span | undefined {
  const c0 = text.charCodeAt(after)
  if (c0 !== CLOSE_BRACE && c0 !== COMMA) return undefined
  const last = skipWhitespaceBack(text, after - 1)
  const end = last + 1
  let start: number
  if (text.charCodeAt(last) === QUOTE) {
    // The opening quote is the first one before it that is not escaped.
    let q = last - 1
    for (;;) {
      q = text.lastIndexOf('"', q)
      if (q <= open) return undefined
      let k = q - 1
      while (text.charCodeAt(k) === BACKSLASH) k--
      if ((q - 1 - k) % 2 === 0) break
      q--
    }
    start = q
  } else {
    let k = last
    while (k > open && isScalarChar(text.charCodeAt(k))) k--
    start = k + 1
  }
  if (start >= end) return undefined
  const colon = skipWhitespaceBack(text, start - 1)
  if (text.charCodeAt(colon) !== COLON) return undefined
  const keyEnd = skipWhitespaceBack(text, colon - 1) + 1
  const keyStart = keyEnd - 4
  if (keyStart <= open || !text.startsWith('"id"', keyStart)) return undefined
  // The key's opening quote follows a comma or the object's brace, so it is not an escaped quote.
  const before = skipWhitespaceBack(text, keyStart - 1)
  const c = text.charCodeAt(before)
  if (c !== COMMA && !(c === OPEN_BRACE && before === skipWhitespace(text, open))) return undefined
  return { start, end }
}

/** A character of a number or a literal (true, false, null). */
function isScalarChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x45
}

function skipWhitespaceBack(text: string, i: number): number {
  while (i >= 0) {
    const c = text.charCodeAt(i)
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break
    i--
  }
  return i
}

/**
 * A body that is not UTF-8: each call whose bytes are valid is served as usual, each other one is
 * refused with -32600 (its id echoed when the id itself is valid UTF-8, else null).
 */
function parseNotUtf8(buf: Buffer): ParsedBody {
  // Latin-1 gives one character per byte, so positions in this text are byte offsets, and bytes
  // >= 0x80 (the only ones that can be bad UTF-8) never look like JSON structure.
  const latin = buf.toString('latin1')
  let value: unknown
  try {
    value = JSON.parse(latin)
  } catch {
    return { kind: 'parse-error', message: `${ERRORS.PARSE_ERROR.message}, nor UTF-8: ${NOT_UTF8}` }
  }
  const start = skipWhitespace(latin, 0)
  if (!Array.isArray(value)) return { kind: 'single', entry: entryOfBytes(buf, latin, { start, end: skipWhitespaceBack(latin, latin.length - 1) + 1 }) }
  const spans = arrayItemSpans(latin, start)
  if (value.length === 0 || spans === undefined) return { kind: 'parse-error', message: `${ERRORS.PARSE_ERROR.message}: ${NOT_UTF8}` }
  return { kind: 'batch', entries: spans.map((span) => entryOfBytes(buf, latin, span)) }
}

function entryOfBytes(buf: Buffer, latin: string, span: Span): RpcEntry {
  const bytes = buf.subarray(span.start, span.end)
  if (isUtf8(bytes)) {
    const text = bytes.toString('utf8')
    return checkRequest(JSON.parse(text), text, 0, text.length)
  }
  const id = latin.charCodeAt(span.start) === OPEN_BRACE ? scanTopLevel(latin, span.start)?.lastId : undefined
  if (id === undefined) return invalid('null', `Invalid Request: the request is not valid UTF-8; ${NOT_UTF8}`)
  const idBytes = buf.subarray(id.start, id.end)
  if (!isUtf8(idBytes)) return invalid('null', `Invalid Request: the id is not valid UTF-8, so it cannot be echoed; ${NOT_UTF8}`)
  const idJson = idBytes.toString('utf8')
  const c = idJson.charCodeAt(0)
  const idOk = idJson.length <= MAX_ID_LENGTH && (c === QUOTE || c === 0x2d || (c >= 0x30 && c <= 0x39) || idJson === 'null')
  return invalid(idOk ? idJson : 'null', `Invalid Request: the request contains bytes that are not valid UTF-8; ${NOT_UTF8}`)
}
