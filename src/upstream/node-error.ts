import type { Answer } from './answer.js'

/** A node's JSON-RPC error object, as far as the gateway judges nodes by it. */
export interface NodeError {
  readonly code: number
  readonly message: string
  /**
   * The error carries `data`: revert data (code 3, "execution reverted") or the node's details.
   * What a contract's code can write ends up there or in the message after "execution reverted":
   * an error with data is never read as a fact about the node.
   */
  readonly hasData: boolean
  /** The `data` is `{"message": m}` with the error's own message m, nothing else (Hardhat's EDR adds it to its errors). */
  readonly dataIsMessage: boolean
}

/**
 * Error objects are small; a longer answer is not one the judging below reads (a revert with a
 * long reason, a node's stack): without the bound, a tenant's 1 MB revert reason would be parsed
 * on every call.
 */
const SHORT = 2_000

/**
 * The error object of a node's error answer, read whole (error answers only: never on a result,
 * so an ordinary call's path is untouched); undefined when the answer is not a short JSON-RPC error
 * with a numeric code and a string message.
 * @example
 * nodeErrorOf(answer) // { code: -32601, message: 'Method not found', hasData: false, dataIsMessage: false }
 */
export function nodeErrorOf(answer: Answer): NodeError | undefined {
  if (!answer.isError || answer.bytes !== undefined) return undefined
  const text = answer.text
  if (text.length > SHORT) return undefined
  let error: { code?: unknown; message?: unknown; data?: unknown } | undefined
  try {
    error = (JSON.parse(text) as { error?: typeof error }).error
  } catch {
    return undefined
  }
  if (error === null || typeof error !== 'object' || typeof error.code !== 'number' || typeof error.message !== 'string') return undefined
  const data = error.data as { message?: unknown } | null | undefined
  const dataIsMessage = typeof data === 'object' && data !== null && Object.keys(data).length === 1 && data.message === error.message
  return { code: error.code, message: error.message, hasData: data !== undefined && data !== null, dataIsMessage }
}
