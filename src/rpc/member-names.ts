/**
 * Member names as a node written in Go reads them. Go's encoding/json (geth, Erigon) matches a
 * JSON member to a struct field by its exact name, else by the name ignoring case (Unicode simple
 * folding), the last matching member winning; JSON.parse here reads only the exact name. The
 * gateway forwards the params as the client wrote them, so in `{"to":A,"TO":B}` it would check A
 * and geth would run B: a member whose name folds to a name the node reads without being it is
 * refused instead (src/rpc/params-objects.ts), which costs one Set lookup per member when the
 * names are exact, where writing the params again from the members read would cost a
 * JSON.stringify per call.
 */

/** The names a node reads in one kind of object, exact and folded. */
export interface KnownMembers {
  /** What the object is, for messages: "transaction object", "logs filter"… */
  readonly what: string
  readonly exact: ReadonlySet<string>
  /** A name folded (foldName) → the exact name the node reads. */
  readonly folded: ReadonlyMap<string, string>
}

export function knownMembers(what: string, names: readonly string[]): KnownMembers {
  return Object.freeze({ what, exact: new Set(names), folded: new Map(names.map((n) => [foldName(n), n])) })
}

/**
 * A name as Go folds it, for comparing with the table's ASCII names: `toLowerCase` maps the ASCII
 * capitals and the Kelvin sign (U+212A) to their ASCII letters, and the long s (U+017F), which
 * Go's folding counts as an `s`, is already lower case, so it is mapped by hand. No other
 * character folds to an ASCII letter, so a name that folds to one of the table's names here does
 * in Go, and the other way round.
 */
export function foldName(name: string): string {
  const lower = name.toLowerCase()
  return lower.includes('\u017f') ? lower.replaceAll('\u017f', 's') : lower
}

/**
 * The first member of `object` that a Go node would read as one of `known`'s names without being
 * that name, with the name it stands for; undefined when every member is exact or unknown.
 * Exact duplicates need no check: JSON.parse and Go both keep the last.
 */
export function strayMember(object: object, known: KnownMembers): { name: string; canonical: string } | undefined {
  for (const name in object) {
    if (known.exact.has(name)) continue
    const canonical = known.folded.get(foldName(name))
    if (canonical !== undefined) return { name, canonical }
  }
  return undefined
}
