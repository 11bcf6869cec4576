/** The dashboard API refused a request: its HTTP status, its code and the message to show. */
export class ApiFailure extends Error {
  override name = 'ApiFailure'
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, string | number> = {},
  ) {
    super(message)
  }
}

/** A wallet failure in words a user understands. */
export class WalletFailure extends Error {
  override name = 'WalletFailure'
}
