/**
 * Who owns an account in a fleet: rendezvous (highest-random-weight) hashing of the account id
 * over the live members' ids, as pure functions.
 *
 * Each member scores every account; the highest scores own it. A member that joins takes only the
 * accounts on which it scores highest, and one that leaves gives up only those it owned: every
 * other account keeps its owners, with no table to agree on and no hand-over (each instance
 * computes the same owners from the same membership). Consistent hashing on a ring does as much
 * but needs virtual nodes to spread evenly; with a few hundred members, scoring each is cheap
 * enough once the members' part of the score is computed once per membership (OwnerPicker), and the
 * callers cache the answer per account until the membership changes.
 */

/**
 * Two owners per account. With one, an owner killed without a word takes its view of the last
 * second with it, and until the others drop it as silent (fleet.silentMs, 3 s) they report to
 * nobody: a key called above its rate on several instances then is never marked hot. With two, a
 * single change (a join, a leave, a death) always leaves one owner that kept its view, at twice
 * the owners' entries (still a share, 2/N, of the accounts, not the fleet's calls).
 */
export const OWNERS_PER_ACCOUNT = 2

/** FNV-1a, 32 bits: a short string's hash, without crypto (which costs more than the scoring it feeds). */
function fnv1a(s: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/** Murmur3's finaliser: every input bit reaches every output bit, so nearby hashes score apart. */
function mix(h: number): number {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** A member's score for an account: the higher, the likelier it owns it. */
export function score(accountId: string, memberId: string): number {
  return scoreWith(accountHash(accountId), memberSeed(memberId))
}

/** An account's hash, the one thing a lookup computes per account (OwnerPicker hashes it once). */
export function accountHash(accountId: string): number {
  return fnv1a(accountId)
}

/** What a member brings to every score: it depends on the member alone, so OwnerPicker computes it once per membership. */
export function memberSeed(memberId: string): number {
  return mix(fnv1a(memberId) + 0x9e3779b9)
}

/** An account's score with one member, from the account's hash and the member's seed. */
export function scoreWith(accountHash: number, seed: number): number {
  return mix(accountHash ^ seed)
}

/**
 * The `count` owners of an account among `members` (ids), the highest score first; ties (equal
 * 32-bit scores) by id, so that every instance picks the same. It hashes every member for each
 * account: to look up many accounts in one membership, build an OwnerPicker (owner-picker.ts) once.
 * @example
 * ownersOf('acc_1', ['i0', 'i1', 'i2', 'i3']) // e.g. ['i2', 'i0']
 */
export function ownersOf(accountId: string, members: readonly string[], count = OWNERS_PER_ACCOUNT): string[] {
  const a = accountHash(accountId)
  const scored: { id: string; s: number }[] = []
  for (const id of members) scored.push({ id, s: scoreWith(a, memberSeed(id)) })
  scored.sort((x, y) => y.s - x.s || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
  return scored.slice(0, count).map((x) => x.id)
}
