import t from 'tap'
import { FakeClock } from '../helpers/fake-clock.js'
import { NONCE_TTL_MS, SiweNonces } from '../../src/siwe/nonces.js'

// The nonces a process has seen tried are remembered only while they could still be used (their
// 5 minutes), and at most a bound of them: a stream of sign-in attempts cannot grow it for ever,
// and a nonce tried again within its life is still refused. The account's own stream forgets the
// nonces of its sign-ins likewise (test/accounts/decide.test.ts, NONCE_MEMORY_MS).

const SECRET = 'nonce-pruning-secret-0123456789abcdef'

/** Issue a nonce now and spend it as a sign-in attempt does (check, then spend). */
function attempt(nonces: SiweNonces, clock: FakeClock, nonce = nonces.issue(clock.now())): string {
  nonces.spend(nonce, nonces.check(nonce, clock.now()), clock.now())
  return nonce
}

t.test('spent nonces are forgotten once expired; one tried again within its life is refused', async (t) => {
  const clock = new FakeClock()
  const nonces = new SiweNonces(SECRET)
  const first = attempt(nonces, clock)
  for (let i = 0; i < 999; i++) {
    clock.advance(100)
    attempt(nonces, clock)
  }
  t.equal(nonces.spentCount, 1000, 'a thousand attempts within 100 s: all remembered')
  t.throws(() => attempt(nonces, clock, first), { code: 'NONCE_USED' }, 'the first one, 100 s later, is refused')

  clock.advance(NONCE_TTL_MS + 1000)
  t.throws(() => nonces.check(first, clock.now()), { code: 'NONCE_EXPIRED' }, 'past its life it is refused by its expiry alone')
  attempt(nonces, clock)
  t.equal(nonces.spentCount, 1, 'so the next attempt forgets the expired ones: only itself is left')
})

t.test('at most maxSpent are remembered; past it the oldest go first', async (t) => {
  const clock = new FakeClock()
  const nonces = new SiweNonces(SECRET, { maxSpent: 50 })
  const tried = Array.from({ length: 80 }, () => attempt(nonces, clock))
  t.equal(nonces.spentCount, 50)
  t.throws(() => attempt(nonces, clock, tried.at(-1)), { code: 'NONCE_USED' }, 'a recent one is still refused')
})
