/**
 * What a composition root opened, to be closed in reverse order: each part is registered as soon
 * as it is open, so that a start that fails half-way closes exactly what it opened (no port, LMDB
 * environment or NATS connection left behind), and a stop closes the parts in the order that
 * never leaves one using another already closed. Node 20 has no AsyncDisposableStack; this is it.
 *
 * @example
 * const closers = new Closers()
 * const store = closers.add('state store', StateStore.open(path), (s) => s.close())
 * await closers.closeAll((name, err) => logger.warn({ err }, `closing ${name} failed`))
 */
export class Closers {
  readonly #stack: { name: string; close: () => unknown }[] = []
  #closing: Promise<void> | undefined

  /** Register `part` (already open) and its closer; returns `part`. */
  add<T>(name: string, part: T, close: (part: T) => unknown): T {
    if (this.#closing !== undefined) throw new Error(`${name} opened while closing`)
    this.#stack.push({ name, close: () => close(part) })
    return part
  }

  /** Register a closer with no part (a timer, a subscription). */
  defer(name: string, close: () => unknown): void {
    this.add(name, undefined, close)
  }

  /**
   * Close everything, the last opened first. A closer that fails is reported and the others
   * still run: one stuck part must not keep the rest open. Runs once; later calls wait for it.
   */
  closeAll(onError: (name: string, err: unknown) => void): Promise<void> {
    this.#closing ??= (async () => {
      for (const { name, close } of this.#stack.reverse()) {
        try {
          await close()
        } catch (err) {
          onError(name, err)
        }
      }
    })()
    return this.#closing
  }
}
