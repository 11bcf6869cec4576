import t from 'tap'
import { OWNERS_PER_ACCOUNT, ownersOf } from '../../actors/fleet/owners.js'

// Rendezvous hashing of an account over the live members: every instance that sees the same members
// picks the same owners; a member joining takes only accounts it now owns, one leaving gives up only
// those it owned; and the accounts spread evenly.

const accounts = Array.from({ length: 10_000 }, (_, i) => `acc_${i.toString(16).padStart(12, '0')}`)
const members = Array.from({ length: 10 }, (_, i) => `host-${i}.example-4242-lq${i}`)

t.test('the same members in any order give the same owners, two distinct ones', async (t) => {
  const shuffled = [...members].reverse()
  let same = 0
  for (const a of accounts.slice(0, 1_000)) {
    const o = ownersOf(a, members)
    if (o.join() === ownersOf(a, shuffled).join() && o.length === OWNERS_PER_ACCOUNT && o[0] !== o[1]) same++
  }
  t.equal(same, 1_000)
  t.same(ownersOf('acc_1', ['only']), ['only'], 'a fleet of one owns everything')
  t.same(ownersOf('acc_1', []), [], 'nobody: no owner')
})

t.test('owners spread evenly over the members', async (t) => {
  const first = new Map<string, number>()
  for (const a of accounts) {
    const [o] = ownersOf(a, members)
    first.set(o!, (first.get(o!) ?? 0) + 1)
  }
  const counts = members.map((m) => first.get(m) ?? 0)
  t.comment(`first owners of ${accounts.length} accounts over ${members.length}: ${counts.join(', ')}`)
  // 1,000 expected each; a binomial's standard deviation is 30: 15% is five of them.
  for (const c of counts) t.ok(c > 850 && c < 1_150, `${c} within 15% of 1,000`)
})

t.test('a member joining moves only the accounts it now owns', async (t) => {
  const joined = [...members, 'host-new-1-abc']
  let moved = 0
  let wrong = 0
  for (const a of accounts) {
    const before = ownersOf(a, members)
    const after = ownersOf(a, joined)
    if (before.join() === after.join()) continue
    moved++
    // The newcomer is among the owners, and the one it displaced is the other's old runner-up.
    if (!after.includes('host-new-1-abc') || !after.every((o) => o === 'host-new-1-abc' || before.includes(o))) wrong++
  }
  t.comment(`a join changed the owners of ${moved} of ${accounts.length} accounts (expected 2/11: ${Math.round((accounts.length * 2) / 11)})`)
  t.equal(wrong, 0, 'every change puts the newcomer in, and keeps one owner from before')
  t.ok(moved > (accounts.length * 2 * 0.85) / 11 && moved < (accounts.length * 2 * 1.15) / 11, 'about its share, 2/11')
})

t.test('a member leaving moves only the accounts it owned', async (t) => {
  const gone = members[3]!
  const left = members.filter((m) => m !== gone)
  let moved = 0
  let wrong = 0
  for (const a of accounts) {
    const before = ownersOf(a, members)
    const after = ownersOf(a, left)
    if (before.join() === after.join()) continue
    moved++
    // Only where it was an owner; the other owner stays.
    if (!before.includes(gone) || !before.some((o) => o !== gone && after.includes(o))) wrong++
  }
  t.comment(`a leave changed the owners of ${moved} of ${accounts.length} accounts (expected 2/10: ${(accounts.length * 2) / 10})`)
  t.equal(wrong, 0, 'every change was of an account it owned, and its other owner stays')
  t.ok(moved > (accounts.length * 2 * 0.85) / 10 && moved < (accounts.length * 2 * 1.15) / 10, 'about its share, 2/10')
})
