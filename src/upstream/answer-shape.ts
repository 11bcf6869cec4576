/**
 * What a node's answer looks like from its ends: a JSON-RPC answer is an object or a batch array
 * that ends as it began. Reading only the first and the last bytes costs nothing on a 1 MB answer,
 * and catches what a broken node or proxy sends: an error page, an empty body, an answer cut off
 * (a node that crashed mid-write, a proxy with a buffer limit), which would otherwise reach the
 * client with its id spliced in and fail in the client's JSON parser instead of here.
 *
 * It is not a validator: an answer cut exactly after a nested `}` passes. A full parse of every
 * answer would cost more than the rest of the call (see json-rpc-wire.ts).
 */
export type AnswerShape = 'json' | 'empty' | 'not-json' | 'truncated'

const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d

/**
 * The shape of an answer's bytes.
 * @example answerShape(Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x')) // 'truncated'
 */
export function answerShape(bytes: Buffer): AnswerShape {
  let first = 0
  while (first < bytes.length && isSpace(bytes[first])) first++
  if (first === bytes.length) return 'empty'
  const open = bytes[first]
  if (open !== OPEN_BRACE && open !== OPEN_BRACKET) return 'not-json'
  let last = bytes.length - 1
  while (isSpace(bytes[last])) last--
  return bytes[last] === (open === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET) && last > first ? 'json' : 'truncated'
}

/** How an answer of this shape is described in errors and logs (what the node did). */
export function describeShape(shape: Exclude<AnswerShape, 'json'>, bytes: Buffer): string {
  switch (shape) {
    case 'empty':
      return bytes.length === 0 ? 'an empty body' : `a body of ${bytes.length} blank bytes`
    case 'not-json':
      return `a non-JSON body (${bytes.length} bytes)`
    case 'truncated':
      return `a truncated JSON body (${bytes.length} bytes, without its closing ${firstOpen(bytes) === OPEN_BRACE ? '}' : ']'})`
  }
}

/** The first bytes of an answer as text, for logs: enough to recognise an error page. */
export function sampleOf(bytes: Buffer): string {
  return JSON.stringify(bytes.toString('utf8', 0, Math.min(bytes.length, 120)))
}

function firstOpen(bytes: Buffer): number | undefined {
  for (const b of bytes) if (!isSpace(b)) return b
  return undefined
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}
