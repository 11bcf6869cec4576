/**
 * CPU per account of finding its two owners (actors/fleet/owners.ts): `ownersOf`, which hashes
 * every member and sorts them for each account (the named baseline), against an OwnerPicker built
 * once for the membership (actors/fleet/owner-picker.ts), at 10, 100 and 300 members. Each round
 * looks up the owners of every account once, as an instance does after a membership change; the
 * two agree on every account (checked). CPU from process.cpuUsage (user + system); the best of the
 * rounds, as the machine is shared.
 *
 *   node --import tsx bench/owner-picker.ts [--accounts 20000] [--members 10,100,300] [--rounds 5]
 */
import { parseArgs } from 'node:util'
import { OwnerPicker } from '../actors/fleet/owner-picker.js'
import { ownersOf } from '../actors/fleet/owners.js'

const { values } = parseArgs({
  options: { accounts: { type: 'string', default: '20000' }, members: { type: 'string', default: '10,100,300' }, rounds: { type: 'string', default: '5' } },
})
const ACCOUNTS = Array.from({ length: Number(values.accounts) }, (_, i) => `acc_${i.toString(16).padStart(16, '0')}`)
const ROUNDS = Number(values.rounds)

function cpuMicros(): number {
  const u = process.cpuUsage()
  return u.user + u.system
}

/** The best of ROUNDS rounds of looking up every account, in µs an account. */
function best(lookup: (accountId: string) => string[]): number {
  let least = Number.POSITIVE_INFINITY
  let sink = 0
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = cpuMicros()
    for (const a of ACCOUNTS) sink += lookup(a).length
    least = Math.min(least, (cpuMicros() - t0) / ACCOUNTS.length)
  }
  if (sink === 0) throw new Error('no owners')
  return least
}

const load = (await import('node:os')).loadavg().map((x) => x.toFixed(1))
console.log(`${ACCOUNTS.length} accounts, best of ${ROUNDS} rounds, load ${load.join(' ')}`)
console.log('| members | ownersOf µs/account | OwnerPicker µs/account | ratio | picker built in µs |')
console.log('|---|---|---|---|---|')
for (const n of values.members.split(',').map(Number)) {
  const members = Array.from({ length: n }, (_, i) => `host-${i}.tollgate-${(i * 7919) % 10_007}`)
  const t0 = cpuMicros()
  const picker = new OwnerPicker(members)
  const builtIn = cpuMicros() - t0
  for (const a of ACCOUNTS.slice(0, 2_000)) {
    if (picker.ownersOf(a).join() !== ownersOf(a, members).join()) throw new Error(`owners differ for ${a} at ${n} members`)
  }
  const before = best((a) => ownersOf(a, members))
  const after = best((a) => picker.ownersOf(a))
  console.log(`| ${n} | ${before.toFixed(2)} | ${after.toFixed(2)} | ${(before / after).toFixed(1)}x | ${builtIn} |`)
}
