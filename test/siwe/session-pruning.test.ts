import { join } from 'node:path'
import t from 'tap'
import { FakeClock } from '../helpers/fake-clock.js'
import { AccountHost } from '../../src/accounts/account-host.js'
import { accountIdForWallet } from '../../src/accounts/wallet.js'
import { replay, stateDigest } from '../../src/projections/replay.js'
import { MAX_SESSIONS_PER_ACCOUNT, sessionsEndedBySignIn } from '../../src/accounts/sessions.js'
import { openLedger } from '../helpers/ledger.js'

// Sessions end: an expired one is deleted from the projection when its account signs in again,
// and an account keeps at most MAX_SESSIONS_PER_ACCOUNT, by the events' times only (a fake
// clock drives them), so the account's own state and a replay of the log drop the same ones.

const HOUR = 3_600_000

t.test('the sessions a sign-in ends: the expired ones, then the first to expire past the bound', async (t) => {
  const T = 1_800_000_000_000
  const s = (n: number, expiresAt: number) => ({ sessionHash: `h${String(n).padStart(2, '0')}`, expiresAt })
  t.same(sessionsEndedBySignIn([s(1, T - 1), s(2, T), s(3, T + 1)], T), ['h01', 'h02'], 'expired at the time of the sign-in (expiresAt <= time)')
  const live = Array.from({ length: MAX_SESSIONS_PER_ACCOUNT + 2 }, (_, i) => s(i, T + HOUR + (i % 3)))
  t.same(sessionsEndedBySignIn(live, T), ['h00', 'h03'], 'the two that expire first; ties by hash')
  t.same(sessionsEndedBySignIn(live.slice(0, MAX_SESSIONS_PER_ACCOUNT), T), [], 'at the bound: none')
})

t.test('expired sessions are pruned, at most 10 are kept, and a replay gives the same state', async (t) => {
  const clock = new FakeClock(1_800_000_000_000)
  const ledger = await openLedger(t, { clock })
  const host = new AccountHost({ log: ledger.log, catalog: ledger.catalog, projector: ledger.projector })
  const wallet = `0x${'ab'.repeat(20)}`
  const accountId = accountIdForWallet(wallet)
  let n = 0
  const signIn = async (ttlMs: number) => {
    const sessionHash = `${String(++n).padStart(2, '0')}`.padEnd(64, 'f')
    const { state } = await host.execute(accountId, {
      type: 'SignIn',
      wallet,
      nonce: `nonce-${n}`,
      sessionHash,
      expiresAt: clock.now() + ttlMs,
      chainId: 1,
      signer: 'eoa',
      now: clock.now(),
    })
    return { sessionHash, state }
  }

  const first = await signIn(HOUR)
  t.ok(ledger.store.session(first.sessionHash), 'projected')
  clock.advance(2 * HOUR)
  const second = await signIn(HOUR)
  t.equal(ledger.store.session(first.sessionHash), undefined, 'the expired session is deleted from the projection')
  t.same([...second.state.sessions.keys()], [second.sessionHash], "and from the account's state")

  const later: string[] = [second.sessionHash]
  for (let i = 0; i < MAX_SESSIONS_PER_ACCOUNT; i++) {
    clock.advance(1_000)
    later.push((await signIn(HOUR)).sessionHash)
  }
  t.equal(ledger.store.session(second.sessionHash), undefined, 'the 11th live session ended the one that expires first')
  for (const hash of later.slice(1)) t.ok(ledger.store.session(hash), `${hash.slice(0, 2)} is kept`)
  const state = await host.load(accountId)
  t.same([...state.sessions.keys()].sort(), later.slice(1).sort(), 'the same ten in the state')

  const out = await host.execute(accountId, { type: 'SignOut', sessionHash: second.sessionHash, now: clock.now() })
  t.same(out.events, [], 'signing out of an ended session appends nothing')

  await ledger.projector.catchUp()
  const live = stateDigest(ledger.store)
  const rebuilt = await replay(join(ledger.store.path, '..', 'replayed'), ledger.log)
  t.equal(rebuilt.digest, live, 'replay prunes the same sessions')
})
