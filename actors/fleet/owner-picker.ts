import { accountHash, memberSeed, OWNERS_PER_ACCOUNT, scoreWith } from './owners.js'

/**
 * The owners of accounts in one membership, built once per membership change: the same owners as
 * `ownersOf` (rendezvous hashing, owners.ts), with what depends on the members alone computed here
 * once.
 *
 * Why: `ownersOf` hashes every member's id and sorts all N members for each account, and each
 * instance looks up the owners of every account it serves again after every join or leave. Here a
 * lookup hashes the account once, scores it against each member's precomputed seed (one mix each)
 * and keeps the best `count` in one pass, with no sort and no allocation but the answer:
 * `bench/owner-picker.ts` measured 0.63 µs an account at 100 members where `ownersOf` took 19 µs
 * (1.2 against 63 at 300), so 100,000 accounts after a change cost an instance 63 ms of its event
 * loop, not 2 to 6 s with its heartbeats waiting behind. A ring of virtual points would look up in O(log N), but it
 * gives other owners than the ones the fleet already agrees on and needs hundreds of points per
 * member to spread as evenly; at a few hundred members a pass over the seeds is cheap enough.
 * @example
 * const picker = new OwnerPicker(['i0', 'i1', 'i2', 'i3'])
 * picker.ownersOf('acc_1') // the same as ownersOf('acc_1', ['i0', 'i1', 'i2', 'i3'])
 */
export class OwnerPicker {
  /** The members, sorted by id and without repeats: an equal score goes to the lower id, as `ownersOf` breaks ties. */
  readonly members: readonly string[]
  readonly #seeds: Int32Array
  readonly #count: number

  constructor(members: Iterable<string>, count = OWNERS_PER_ACCOUNT) {
    this.members = [...new Set(members)].sort()
    this.#seeds = Int32Array.from(this.members, memberSeed)
    this.#count = Math.max(0, Math.min(count, this.members.length))
  }

  get size(): number {
    return this.members.length
  }

  /** The account's owners, the highest score first. */
  ownersOf(accountId: string): string[] {
    const k = this.#count
    if (k === 0) return []
    const a = accountHash(accountId)
    const seeds = this.#seeds
    // The best k so far, best first, as member indices and scores. The members are in id order,
    // so a later member with an equal score never displaces an earlier one (strict >).
    const best: number[] = []
    const scores: number[] = []
    for (let i = 0; i < seeds.length; i++) {
      const s = scoreWith(a, seeds[i]!)
      if (best.length === k && s <= scores[k - 1]!) continue
      let j = best.length < k ? best.length : k - 1
      while (j > 0 && s > scores[j - 1]!) {
        best[j] = best[j - 1]!
        scores[j] = scores[j - 1]!
        j--
      }
      best[j] = i
      scores[j] = s
    }
    return best.map((i) => this.members[i]!)
  }

  /** Whether `memberId` is one of the account's owners. */
  owns(accountId: string, memberId: string): boolean {
    return this.ownersOf(accountId).includes(memberId)
  }
}
