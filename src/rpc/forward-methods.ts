/**
 * A network's allowlist of methods outside the method table (config `networks.<slug>.forwardMethods`):
 * exact names (`eth_getRawBlockAccessList`) and prefixes written with a trailing `*`
 * (`debug_getRaw*`). Empty by default: a method the table does not list reaches no node unless the
 * operator names it here. The refusals (src/rpc/node-operating-methods.ts) are checked before this,
 * so a pattern never opens a method that operates the node.
 * @example
 * const allowed = new ForwardMethods(['eth_getRaw*', 'debug_dumpBlock'])
 * allowed.allows('eth_getRawThing') // true
 * allowed.allows('debug_dumpBlocks') // false
 */
export class ForwardMethods {
  readonly #exact: ReadonlySet<string>
  readonly #prefixes: readonly string[]

  constructor(entries: readonly string[]) {
    this.#exact = new Set(entries.filter((e) => !e.endsWith('*')))
    this.#prefixes = entries.filter((e) => e.endsWith('*')).map((e) => e.slice(0, -1))
  }

  /** Whether the list allows the method (called once per method name and network: the caller caches it). */
  allows(method: string): boolean {
    return this.#exact.has(method) || this.#prefixes.some((p) => method.startsWith(p))
  }

  get empty(): boolean {
    return this.#exact.size === 0 && this.#prefixes.length === 0
  }
}
