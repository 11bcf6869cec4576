import { ERRORS } from '../errors/registry.js'

/**
 * JSON-RPC 2.0 request parsing and checking, as the spec and JSON-RPC 2.0 say. A batch is checked
 * call by call: one bad call becomes one error entry, the others go on.
 */

/** A call that passed the checks. `idJson` is the request id as JSON text, echoed exactly. */
export interface RpcCall {
  readonly method: string
  readonly params: unknown
  /** undefined: a notification (no id member): forwarded, never answered. */
  readonly idJson: string | undefined
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

/** Parse a request body (UTF-8 text). Never throws. */
export function parseRpcBody(text: string): ParsedBody {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    return { kind: 'parse-error', message: `${ERRORS.PARSE_ERROR.message} (${(err as Error).message})` }
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return { kind: 'empty-batch' }
    const entries = new Array<RpcEntry>(value.length)
    for (let i = 0; i < value.length; i++) entries[i] = checkRequest(value[i])
    return { kind: 'batch', entries }
  }
  return { kind: 'single', entry: checkRequest(value) }
}

/** Check one request object. */
export function checkRequest(value: unknown): RpcEntry {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return invalid('null', 'Invalid Request: expected a JSON-RPC request object {"jsonrpc":"2.0","method":...,"params":[...],"id":...}')
  }
  const req = value as Record<string, unknown>
  const hasId = Object.prototype.hasOwnProperty.call(req, 'id')
  const id = req.id
  let idJson: string | undefined
  if (hasId) {
    if (id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) {
      idJson = JSON.stringify(id)
    } else {
      return invalid('null', 'Invalid Request: "id" must be a string, a number or null')
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
  return { method: req.method, params, idJson }
}

function invalid(idJson: string, message: string): RpcInvalid {
  return { invalid: true, idJson, rpc: ERRORS.INVALID_REQUEST.rpc, message }
}
