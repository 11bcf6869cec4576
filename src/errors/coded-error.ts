/**
 * The one base of the gateway's refusals that callers tell apart by a stable `code` (to an HTTP
 * status, an exit status, words for users) without parsing messages: the account commands',
 * sign-in's and payments' (src/accounts/errors.ts). What a JSON-RPC client gets is GatewayError
 * (src/errors/registry.ts).
 * @example
 * class PlanError extends CodedError<'UNKNOWN_PLAN'> {}
 * if (err instanceof CodedError) status = statusOf(err.code)
 */
export class CodedError<C extends string = string> extends Error {
  readonly code: C
  constructor(code: C, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
  }
}
