import { MAX_ID_LENGTH, MAX_PARAMS_DEPTH, deeperThan } from './request-bounds.js'
import { METHODS } from './method-table.js'
import { paramsRefusal } from './params-objects.js'
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE, skipNested, skipWhitespace } from './json-scan.js'

/**
 * The request bodies every client library writes, read without JSON.parse of the whole body.
 *
 * A batch of 50 calls cost 20 µs of JSON.parse alone (an object and its hidden class per call),
 * then a walk of the text to find each call's id as sent: the largest cost of a batch in the
 * profile (bench/README.md, issue 14). Here each call is read member by member from the text: the
 * four members of a JSON-RPC request, `"jsonrpc":"2.0"`, a plain method name, an id that is an
 * integer, `null` or a string without escapes, and `params` (only its own text is given to
 * JSON.parse, and `[]` not even that). Its id is its text as sent, by construction.
 *
 * Anything else (another member, an escape, a fraction, a duplicate member, a missing
 * `jsonrpc` or `method`, bad JSON) answers undefined, and the caller reads the body the general
 * way (parse.ts), which gives every message its exact error. So this reads a strict subset of
 * what the general way accepts, and for that subset gives the same calls: a test compares the two
 * on every body it generates.
 */

/** A call read from the common layout. */
export interface CommonCall {
  readonly method: string
  readonly params: unknown
  readonly idJson: string | undefined
  /** The params as the client wrote them (see RpcCall.paramsJson); undefined without params. */
  readonly paramsJson: string | undefined
}

const JSONRPC = 1
const ID = 2
const METHOD = 4
const PARAMS = 8

/**
 * The params `[]` of every call that has them (eth_blockNumber, eth_chainId…): one array, frozen,
 * rather than one per call. Params are never changed once parsed.
 */
const NO_PARAMS: readonly unknown[] = Object.freeze([])

/** Where the reader is in the text: one cursor for the module, the request path never re-enters it. */
let at = 0

/**
 * The calls of a body in the common layout: one call, or the calls of a non-empty batch.
 * Undefined when the body is anything else (the caller then reads it with JSON.parse).
 */
export function readCommonLayout(text: string): { single: CommonCall } | { batch: CommonCall[] } | undefined {
  at = skipWhitespace(text, 0)
  const c = text.charCodeAt(at)
  if (c === OPEN_BRACE) {
    const call = readCall(text)
    if (call === undefined || skipWhitespace(text, at) !== text.length) return undefined
    return { single: call }
  }
  if (c !== OPEN_BRACKET) return undefined
  const calls: CommonCall[] = []
  at = skipWhitespace(text, at + 1)
  for (;;) {
    if (text.charCodeAt(at) !== OPEN_BRACE) return undefined
    const call = readCall(text)
    if (call === undefined) return undefined
    calls.push(call)
    at = skipWhitespace(text, at)
    const next = text.charCodeAt(at)
    if (next === CLOSE_BRACKET) break
    if (next !== COMMA) return undefined
    at = skipWhitespace(text, at + 1)
  }
  return skipWhitespace(text, at + 1) === text.length ? { batch: calls } : undefined
}

/** The call whose `{` is at `at`; leaves `at` after its `}`. */
function readCall(text: string): CommonCall | undefined {
  let seen = 0
  let method = ''
  let params: unknown
  let idJson: string | undefined
  let paramsText: string | undefined
  /** Params read by flatParams: strings and literals only, no object to check. */
  let flat = false
  // A local cursor: the module's is read once and written once (a module binding costs a check per use).
  let i = skipWhitespace(text, at + 1)
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return undefined
    const member = memberAt(text, i)
    if (member === 0 || (seen & member) !== 0) return undefined
    seen |= member
    i = skipWhitespace(text, i + nameLength(member) + 2)
    if (text.charCodeAt(i) !== COLON) return undefined
    const from = skipWhitespace(text, i + 1)
    let end: number
    if (member === JSONRPC) {
      if (!isVersion(text, from)) return undefined
      end = from + 5
    } else if (member === METHOD) {
      end = plainStringEnd(text, from)
      if (end < 0 || end === from + 2) return undefined
      method = methodName(text, from + 1, end - 1)
    } else if (member === ID) {
      end = idEnd(text, from)
      if (end < 0 || end - from > MAX_ID_LENGTH) return undefined
      idJson = text.slice(from, end)
    } else {
      const open = text.charCodeAt(from)
      if (open !== OPEN_BRACKET && open !== OPEN_BRACE) return undefined
      if (open === OPEN_BRACKET && text.charCodeAt(from + 1) === CLOSE_BRACKET) {
        params = NO_PARAMS
        paramsText = '[]'
        end = from + 2
      } else if (open === OPEN_BRACKET && (params = flatParams(text, from)) !== undefined) {
        end = flatEnd
        flat = true
        paramsText = text.slice(from, end)
      } else {
        end = skipNested(text, from)
        if (end < 0) return undefined
        paramsText = text.slice(from, end)
        try {
          params = JSON.parse(paramsText)
        } catch {
          return undefined
        }
        if (deeperThan(params, MAX_PARAMS_DEPTH)) return undefined
      }
    }
    i = skipWhitespace(text, end)
    const c = text.charCodeAt(i)
    if (c === CLOSE_BRACE) break
    if (c !== COMMA) return undefined
    i = skipWhitespace(text, i + 1)
  }
  at = i + 1
  if ((seen & (JSONRPC | METHOD)) !== (JSONRPC | METHOD)) return undefined
  // Params parsed as JSON may hold objects a node reads otherwise than the gateway: the general
  // reading refuses those with their error (flat params hold none, and are not looked at).
  if (paramsText !== undefined && !flat && params !== NO_PARAMS && paramsRefusal(method, params) !== undefined) return undefined
  return { method, params, idJson, paramsJson: paramsText }
}

/** Where the array flatParams read ends (after its `]`). */
let flatEnd = 0

/**
 * Params that are a flat array of plain strings and the literals true, false and null
 * (`["0x…","latest"]`, `["0x…",false]`: the params of most calls), read without JSON.parse: in a
 * batch of 50 eth_getBalance, JSON.parse and the depth check of each call's params were half of
 * reading the body. Anything else (a number, an object, an escape, a control character) answers
 * undefined, and the params are parsed as before; for what it reads, the value is the one
 * JSON.parse gives (a test compares them on generated bodies). Leaves the index after `]` in flatEnd.
 */
function flatParams(text: string, from: number): unknown[] | undefined {
  const out: unknown[] = []
  let i = skipWhitespace(text, from + 1)
  for (;;) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      const end = plainStringEnd(text, i)
      if (end < 0) return undefined
      out.push(text.slice(i + 1, end - 1))
      i = end
    } else if (c === 0x74 /* t */ && text.startsWith('true', i)) {
      out.push(true)
      i += 4
    } else if (c === 0x66 /* f */ && text.startsWith('false', i)) {
      out.push(false)
      i += 5
    } else if (c === 0x6e /* n */ && text.startsWith('null', i)) {
      out.push(null)
      i += 4
    } else return undefined
    i = skipWhitespace(text, i)
    const next = text.charCodeAt(i)
    if (next === CLOSE_BRACKET) {
      flatEnd = i + 1
      return out
    }
    if (next !== COMMA) return undefined
    i = skipWhitespace(text, i + 1)
  }
}

/**
 * The method names of the method table, by a hash of their characters: a name read from a body is
 * the table's own string when it is one of them. A slice of the body would be a new string whose
 * every use as a key (the method table, the method rules, the cache's rules) first hashes it, or
 * looks it up in V8's table of internalized strings; the table's strings are internalized already.
 */
const KNOWN_METHODS = new Map<number, string>()
for (const name of Object.keys(METHODS)) {
  const h = hashOf(name, 0, name.length)
  if (!KNOWN_METHODS.has(h)) KNOWN_METHODS.set(h, name)
}

function hashOf(text: string, from: number, to: number): number {
  let h = to - from
  for (let i = from; i < to; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0
  return h
}

/**
 * The table's method name read last: the calls of a batch mostly share theirs (50 eth_getBalance).
 * Only the table's own strings are kept: a name sliced from a body would keep the body alive.
 */
let lastMethod = ''

/**
 * The characters of `text` from `from` to `to` as a string: the method table's own when it holds
 * that name. The name read last is compared first, which costs less than hashing the name again
 * (15% of reading a batch of 50 calls of one method).
 */
function methodName(text: string, from: number, to: number): string {
  const last = lastMethod
  if (last.length === to - from) {
    let k = 0
    while (k < last.length && last.charCodeAt(k) === text.charCodeAt(from + k)) k++
    if (k === last.length) return last
  }
  return tableName(text, from, to)
}

function tableName(text: string, from: number, to: number): string {
  const known = KNOWN_METHODS.get(hashOf(text, from, to))
  if (known !== undefined && known.length === to - from) {
    let same = true
    for (let i = 0; i < known.length; i++) {
      if (known.charCodeAt(i) !== text.charCodeAt(from + i)) {
        same = false
        break
      }
    }
    if (same) return (lastMethod = known)
  }
  return text.slice(from, to)
}

/** `"2.0"` at `i`. */
function isVersion(text: string, i: number): boolean {
  return (
    text.charCodeAt(i) === QUOTE &&
    text.charCodeAt(i + 1) === 0x32 &&
    text.charCodeAt(i + 2) === 0x2e &&
    text.charCodeAt(i + 3) === 0x30 &&
    text.charCodeAt(i + 4) === QUOTE
  )
}

/** Which of the four members is named at `i` (its opening quote), 0 for any other name. */
function memberAt(text: string, i: number): number {
  switch (text.charCodeAt(i + 1)) {
    case 0x69: // id
      return text.charCodeAt(i + 2) === 0x64 && text.charCodeAt(i + 3) === QUOTE ? ID : 0
    case 0x6a: // jsonrpc
      return text.charCodeAt(i + 8) === QUOTE && sameAt(text, i + 2, SONRPC) ? JSONRPC : 0
    case 0x6d: // method
      return text.charCodeAt(i + 7) === QUOTE && sameAt(text, i + 2, ETHOD) ? METHOD : 0
    case 0x70: // params
      return text.charCodeAt(i + 7) === QUOTE && sameAt(text, i + 2, ARAMS) ? PARAMS : 0
    default:
      return 0
  }
}

// The rest of each name after its first letter, as character codes: compared one by one, which
// on the request path measured four times faster than String.prototype.startsWith (80 ns a call).
const SONRPC = codes('sonrpc')
const ETHOD = codes('ethod')
const ARAMS = codes('arams')

function codes(s: string): number[] {
  return Array.from(s, (c) => c.charCodeAt(0))
}

/** Whether `text` holds these character codes at `i`. */
function sameAt(text: string, i: number, expected: readonly number[]): boolean {
  for (let k = 0; k < expected.length; k++) if (text.charCodeAt(i + k) !== expected[k]) return false
  return true
}

function nameLength(member: number): number {
  return member === ID ? 2 : member === JSONRPC ? 7 : 6
}

/** Index after a string at `i` with no escapes and no control characters, or -1. */
function plainStringEnd(text: string, i: number): number {
  if (text.charCodeAt(i) !== QUOTE) return -1
  const n = text.length
  for (let k = i + 1; k < n; k++) {
    const c = text.charCodeAt(k)
    if (c === QUOTE) return k + 1
    if (c === BACKSLASH || c < 0x20) return -1
  }
  return -1
}

/** Index after an id at `i`: `null`, an integer as JSON writes it, or a plain string; else -1. */
function idEnd(text: string, i: number): number {
  const c = text.charCodeAt(i)
  if (c === QUOTE) return plainStringEnd(text, i)
  if (c === 0x6e /* n */) return text.startsWith('null', i) && !isWordChar(text.charCodeAt(i + 4)) ? i + 4 : -1
  let k = c === 0x2d /* - */ ? i + 1 : i
  const first = text.charCodeAt(k)
  if (first < 0x30 || first > 0x39) return -1
  k++
  // JSON has no leading zeros: `0` alone, or a digit 1-9 and any digits.
  if (first !== 0x30) {
    for (;;) {
      const d = text.charCodeAt(k)
      if (d < 0x30 || d > 0x39) break
      k++
    }
  }
  // A fraction, an exponent or anything glued to the number: the general way decides.
  return isWordChar(text.charCodeAt(k)) || text.charCodeAt(k) === 0x2e ? -1 : k
}

/** A character that may not follow a number or a literal directly. */
function isWordChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x2b || c === 0x2d
}
