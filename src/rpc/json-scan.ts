/**
 * Reading JSON text without parsing it: where a value starts and ends, the members of an object,
 * the items of an array. The gateway uses these to find the `id` of a request or of a node's
 * answer and to splice ids, so that everything else stays the bytes that were sent. Every
 * function takes a position and returns a position or spans (-1 / undefined when the text there is
 * not JSON it can follow); the text itself is never copied or decoded.
 */

/** Where a value lies in a text: [start, end). */
export interface Span {
  start: number
  end: number
}

/** The spans of the top-level members the gateway reads. */
export interface TopLevelMembers {
  /** The first `id` member (answers: the first member of a name wins). */
  id?: Span
  /** The last `id` member: the one JSON.parse keeps, so the one a request's parsed id came from. */
  lastId?: Span
  error?: Span
  result?: Span
}

export const QUOTE = 0x22
export const BACKSLASH = 0x5c
export const COMMA = 0x2c
export const COLON = 0x3a
export const OPEN_BRACE = 0x7b
export const CLOSE_BRACE = 0x7d
export const OPEN_BRACKET = 0x5b
export const CLOSE_BRACKET = 0x5d

/**
 * The items of the JSON array whose `[` is at `open`, as [start, end) spans of the text, each
 * item skipped whole (strings, nested values), never parsed. Undefined when the text there is
 * not an array this walk can follow.
 */
export function arrayItemSpans(text: string, open: number): Span[] | undefined {
  if (text.charCodeAt(open) !== OPEN_BRACKET) return undefined
  const items: Span[] = []
  let i = skipWhitespace(text, open + 1)
  if (text.charCodeAt(i) === CLOSE_BRACKET) return items
  for (;;) {
    const end = skipValue(text, i)
    if (end <= i) return undefined
    items.push({ start: i, end })
    i = skipWhitespace(text, end)
    const c = text.charCodeAt(i)
    if (c === CLOSE_BRACKET) return items
    if (c !== COMMA) return undefined
    i = skipWhitespace(text, i + 1)
  }
}

/**
 * Walks the members of the top-level object, skipping strings and nested values, and returns
 * the spans of the `id`, `error` and `result` values. Undefined when the text is not an object it can
 * walk (the caller then falls back to JSON.parse).
 */
export function scanTopLevel(text: string, from = 0): TopLevelMembers | undefined {
  const found: TopLevelMembers = {}
  let i = skipWhitespace(text, from)
  if (text.charCodeAt(i) !== OPEN_BRACE) return undefined
  i = skipWhitespace(text, i + 1)
  if (text.charCodeAt(i) === CLOSE_BRACE) return found
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return undefined
    const keyEnd = skipString(text, i)
    if (keyEnd < 0) return undefined
    const keyStart = i
    i = skipWhitespace(text, keyEnd)
    if (text.charCodeAt(i) !== COLON) return undefined
    const start = skipWhitespace(text, i + 1)
    const end = skipValue(text, start)
    if (end <= start) return undefined
    // In an answer the first member of a name wins (a duplicate `id` is not valid JSON-RPC
    // anyway); a request's id is its last `id`, the one JSON.parse kept.
    if (isMember(text, keyStart, keyEnd, 'id')) {
      found.id ??= { start, end }
      found.lastId = { start, end }
    } else if (isMember(text, keyStart, keyEnd, 'error')) found.error ??= { start, end }
    else if (isMember(text, keyStart, keyEnd, 'result')) found.result ??= { start, end }
    i = skipWhitespace(text, end)
    const c = text.charCodeAt(i)
    if (c === CLOSE_BRACE) return found
    if (c !== COMMA) return undefined
    i = skipWhitespace(text, i + 1)
  }
}

/**
 * Whether the member name written at [start, end) (quotes included) is `name`, compared in place;
 * written with escapes (`"\u0069d"`) it is decoded, so it still matches.
 */
function isMember(text: string, start: number, end: number, name: string): boolean {
  if (end - start === name.length + 2 && text.startsWith(name, start + 1)) return true
  // An escape is longer than what it stands for: only a longer name can be `name` escaped.
  if (end - start <= name.length + 2) return false
  for (let k = start + 1; k < end - 1; k++) {
    if (text.charCodeAt(k) === BACKSLASH) return JSON.parse(text.slice(start, end)) === name
  }
  return false
}

/** Index after the value starting at `i`, or -1 when it is not terminated. */
export function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i)
  if (c === QUOTE) return skipString(text, i)
  if (c === OPEN_BRACE || c === OPEN_BRACKET) return skipNested(text, i)
  return skipScalar(text, i)
}

/** Index after the closing quote of the string starting at `i`, or -1. */
export function skipString(text: string, i: number): number {
  let from = i + 1
  for (;;) {
    const q = text.indexOf('"', from)
    if (q < 0) return -1
    // A quote preceded by an odd number of backslashes is escaped: `"a\"b"` continues, `"a\\"` ends.
    let k = q - 1
    while (text.charCodeAt(k) === BACKSLASH) k--
    if ((q - 1 - k) % 2 === 0) return q + 1
    from = q + 1
  }
}

/** Index after the object or array starting at `i` (strings inside skipped whole), or -1. */
export function skipNested(text: string, i: number): number {
  let depth = 0
  const n = text.length
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      i = skipString(text, i)
      if (i < 0) return -1
      continue
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--
      if (depth === 0) return i + 1
    }
    i++
  }
  return -1
}

/** Index after a number or a literal (true, false, null). */
export function skipScalar(text: string, i: number): number {
  const n = text.length
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || c <= 0x20) break
    i++
  }
  return i
}

export function skipWhitespace(text: string, i: number): number {
  const n = text.length
  while (i < n) {
    const c = text.charCodeAt(i)
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break
    i++
  }
  return i
}
