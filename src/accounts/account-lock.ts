/**
 * One command at a time per account in this process: a double click must not create two invoices
 * or race a payment against its own activation. Across processes the event log decides (claims,
 * deterministic ids); this only spares the log needless duplicates.
 */
export class AccountLock {
  readonly #tails = new Map<string, Promise<unknown>>()

  async run<T>(accountId: string, work: () => Promise<T>): Promise<T> {
    const before = this.#tails.get(accountId) ?? Promise.resolve()
    const mine = before.then(work, work)
    const tail = mine.catch(() => undefined)
    this.#tails.set(accountId, tail)
    try {
      return await mine
    } finally {
      if (this.#tails.get(accountId) === tail) this.#tails.delete(accountId)
    }
  }
}
