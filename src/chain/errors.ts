/** The node answered a JSON-RPC error (a revert, bad params): kept with its code and data. */
export class ChainRpcError extends Error {
  override name = 'ChainRpcError'
  readonly code: number
  readonly data: unknown
  constructor(method: string, error: { code?: number; message?: string; data?: unknown }, options?: { cause?: unknown }) {
    super(`${method}: ${error.message ?? 'error'} (code ${error.code ?? '?'})`, options)
    this.code = error.code ?? -32603
    this.data = error.data
  }
}

/** The node could not be reached (no healthy node, time-out, connection lost). */
export class ChainUnavailableError extends Error {
  override name = 'ChainUnavailableError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}
