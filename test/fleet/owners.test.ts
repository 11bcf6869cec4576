import t from 'tap'
import { OwnerPicker } from '../../actors/fleet/owner-picker.js'
import { OWNERS_PER_ACCOUNT, ownersOf } from '../../actors/fleet/owners.js'

// Rendezvous hashing of an account over the live members (ownersOf, and the OwnerPicker built once
// per membership, which must pick the same): every instance that sees the same members picks the
// same owners; a member joining takes only accounts it now owns, one leaving gives up only those it
// owned; and the accounts spread evenly.

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

// OwnerPicker: the same owners, computed once per membership.

t.test('an OwnerPicker picks the owners ownersOf picks, in any order of the members', async (t) => {
  const picker = new OwnerPicker([...members].reverse())
  let same = 0
  for (const a of accounts) if (picker.ownersOf(a).join() === ownersOf(a, members).join()) same++
  t.equal(same, accounts.length)
  t.equal(new OwnerPicker([...members, members[0]!]).size, members.length, 'a repeated member counts once')
  t.same(new OwnerPicker(['only']).ownersOf('acc_1'), ['only'], 'a fleet of one owns everything')
  t.same(new OwnerPicker([]).ownersOf('acc_1'), [], 'nobody: no owner')
  t.same(new OwnerPicker(members, 3).ownersOf(accounts[0]!), ownersOf(accounts[0]!, members, 3), 'any count of owners')
  t.ok(picker.owns(accounts[0]!, ownersOf(accounts[0]!, members)[1]!), 'owns: the second owner too')
})

t.test('an OwnerPicker: a member joining takes about 1/(N + 1) of the first owners, and only for itself', async (t) => {
  const before = new OwnerPicker(members)
  const after = new OwnerPicker([...members, 'host-new-2-xyz'])
  let moved = 0
  let elsewhere = 0
  let sets = 0
  let setsWithout = 0
  for (const a of accounts) {
    const [b, a2] = [before.ownersOf(a), after.ownersOf(a)]
    if (b[0] !== a2[0]) {
      moved++
      if (a2[0] !== 'host-new-2-xyz') elsewhere++
    }
    if (b.join() !== a2.join()) {
      sets++
      if (!a2.includes('host-new-2-xyz')) setsWithout++
    }
  }
  const share = accounts.length / (members.length + 1)
  t.comment(
    `first owners moved: ${moved} of ${accounts.length} (1/(N + 1): ${Math.round(share)}); owner pairs changed: ${sets} (2/(N + 1): ${Math.round(2 * share)})`,
  )
  t.equal(elsewhere, 0, 'every first owner that moved went to the newcomer')
  t.equal(setsWithout, 0, 'every pair that changed has the newcomer in it')
  t.ok(moved > share * 0.85 && moved < share * 1.15, `${moved} within 15% of ${Math.round(share)}`)
})

t.test('an OwnerPicker: a member leaving moves only the accounts it owned', async (t) => {
  const gone = members[7]!
  const before = new OwnerPicker(members)
  const after = new OwnerPicker(members.filter((m) => m !== gone))
  let moved = 0
  let notItsOwn = 0
  for (const a of accounts) {
    const [b, a2] = [before.ownersOf(a), after.ownersOf(a)]
    if (b[0] !== a2[0]) {
      moved++
      if (b[0] !== gone) notItsOwn++
    }
    // Where it owned nothing, nothing changes; where it did, the other owner stays.
    if (!b.includes(gone) && b.join() !== a2.join()) notItsOwn++
    if (b.includes(gone) && !b.some((o) => o !== gone && a2.includes(o))) notItsOwn++
  }
  const share = accounts.length / members.length
  t.comment(`a leave moved the first owners of ${moved} of ${accounts.length} (1/N: ${share})`)
  t.equal(notItsOwn, 0, 'only what it owned moved, and its other owner stayed')
  t.ok(moved > share * 0.85 && moved < share * 1.15, `${moved} within 15% of ${share}`)
})
