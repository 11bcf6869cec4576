/** The store is closed (or could not be opened). */
export class StateStoreClosed extends Error {
  override name = 'StateStoreClosed'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
  }
}
