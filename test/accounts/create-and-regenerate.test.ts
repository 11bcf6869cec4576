import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { FakeClock } from '../helpers/fake-clock.js'
import { createAccount, openAccount, regenerateKey, showKey, type AccountCommandDeps } from '../../src/accounts/commands.js'
import { AccountCommandError } from '../../src/accounts/errors.js'
import { accountIdForWallet } from '../../src/accounts/wallet.js'
import { EmbeddedLog } from '../../src/events/embedded-log.js'
import type { EventLog } from '../../src/events/log.js'
import { hashApiKey } from '../../src/keys/api-key.js'
import { KeyCipher } from '../../src/keys/key-cipher.js'
import { loadPlanCatalog } from '../../src/plans/catalog.js'
import { Projector } from '../../src/projections/projector.js'
import { isKeyActive, StateStore } from '../../src/store/state-store.js'
import { within } from '../helpers/eventually.js'

const WALLET = '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01'
const SECRET = 'test-secret-of-a-decent-length-0123456789'
const DAY = 86_400_000

function setup(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-accounts-'))
  const log = EmbeddedLog.open(join(dir, 'log'))
  const store = StateStore.open(join(dir, 'state'))
  const clock = new FakeClock()
  const projector = new Projector(store, log)
  const deps: AccountCommandDeps = { log, store, clock, catalog: loadPlanCatalog('default'), cipher: KeyCipher.fromSecret(SECRET), projector }
  t.teardown(async () => {
    await store.close()
    await log.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return { dir, log, store, clock, deps }
}

async function allEvents(log: EventLog) {
  return log.read(1, 10_000)
}

t.test('create: the returned key is found by its hash, the account has the plan period and the nodes', async (t) => {
  const { log, store, clock, deps } = setup(t)
  const out = await createAccount(deps, { wallet: WALLET, planId: 'tier-1', nodes: [{ network: 'eth-1', kind: 'archive' }] })

  t.match(out.accountId, /^acc_[0-9a-f]{16}$/)
  t.equal(out.accountId, accountIdForWallet(WALLET.toLowerCase()), 'id derived from the lower-case wallet')
  const key = store.keyByHash(hashApiKey(out.apiKey))
  t.ok(key && isKeyActive(key, clock.now()), 'key works right after the command returns')
  t.equal(key!.keyId, out.keyId)
  const account = store.account(out.accountId)!
  t.equal(account.wallet, WALLET.toLowerCase())
  t.same(account.plan, { planId: 'tier-1', startsAt: clock.now(), endsAt: clock.now() + 30 * DAY })
  t.same(account.nodes, [{ network: 'eth-1', kind: 'archive' }])
  t.equal(account.activeKeyId, out.keyId)
  t.equal(showKey(deps, out.accountId), out.apiKey, 'the owner can see the key again')

  const events = await allEvents(log)
  t.same(
    events.map((e) => e.event.type),
    ['AccountCreated', 'PlanActivated', 'NodesSelected', 'KeyIssued'],
  )
  t.notOk(JSON.stringify(events).includes(out.apiKey), 'no event carries the key in clear')
})

t.test('create again for the same wallet: nothing changes, and it says so', async (t) => {
  const { log, store, clock, deps } = setup(t)
  const first = await createAccount(deps, { wallet: WALLET, planId: 'free-trial' })
  clock.advance(1_000)
  const before = await allEvents(log)
  const second = await openAccount(deps, { wallet: WALLET.toLowerCase(), planId: 'tier-3' })
  t.same(second, { accountId: first.accountId, outcome: 'exists', keyId: first.keyId, planId: 'free-trial' })
  t.equal((await allEvents(log)).length, before.length, 'nothing appended')
  t.ok(isKeyActive(store.keyByHash(hashApiKey(first.apiKey))!, clock.now()), 'the key still works')
  await t.rejects(createAccount(deps, { wallet: WALLET, planId: 'tier-3' }), { name: 'AccountOpenError' })
})

t.test('regenerate: new key works, old one stops at now + grace, showKey shows the new one', async (t) => {
  const { store, clock, deps } = setup(t)
  const created = await createAccount(deps, { wallet: WALLET, planId: 'tier-2', nodes: [{ network: 'eth-1', kind: 'full' }] })
  clock.advance(5_000)
  const regen = await regenerateKey(deps, { accountId: created.accountId, graceMs: 60_000 })

  const old = store.keyByHash(hashApiKey(created.apiKey))!
  t.equal(old.revokedAt, clock.now() + 60_000)
  t.ok(isKeyActive(old, clock.now() + 59_999), 'old key works during the grace period')
  t.notOk(isKeyActive(old, clock.now() + 60_000))
  t.ok(isKeyActive(store.keyByHash(hashApiKey(regen.apiKey))!, clock.now()))
  t.equal(showKey(deps, created.accountId), regen.apiKey)

  const again = await regenerateKey(deps, { accountId: created.accountId })
  t.equal(store.keyByHash(hashApiKey(regen.apiKey))!.revokedAt, clock.now(), 'no grace: stops now')
  t.equal(store.account(created.accountId)!.activeKeyId, again.keyId)
})

t.test('refusals have a code, a clear message, and append nothing', async (t) => {
  const { log, deps } = setup(t)
  await t.rejects(createAccount(deps, { wallet: '0x1234', planId: 'tier-1' }), { code: 'BAD_WALLET', name: 'BadWalletError' })
  await t.rejects(createAccount(deps, { wallet: WALLET.slice(2), planId: 'tier-1' }), { code: 'BAD_WALLET' })
  await t.rejects(createAccount(deps, { wallet: WALLET, planId: 'gold' }), {
    code: 'UNKNOWN_PLAN',
    message: /"gold".*free-trial, tier-1, tier-2, tier-3, private/,
  })
  await t.rejects(createAccount(deps, { wallet: WALLET, planId: 'tier-1', nodes: [{ network: 'eth-1', kind: 'light' as 'full' }] }), { code: 'BAD_NODES' })
  await t.rejects(regenerateKey(deps, { accountId: 'acc_0000000000000000' }), { code: 'UNKNOWN_ACCOUNT' })
  t.throws(() => showKey(deps, 'acc_0000000000000000'), { code: 'UNKNOWN_ACCOUNT' })
  const refused = await createAccount(deps, { wallet: 'nope', planId: 'tier-1' }).catch((e: unknown) => e)
  t.ok(refused instanceof AccountCommandError, 'one base class for every refusal')
  t.equal(await log.lastSeq(), 0)

  const { accountId } = await createAccount(deps, { wallet: WALLET, planId: 'tier-1', nodes: [{ network: 'eth-1', kind: 'full' }] })
  await t.rejects(regenerateKey(deps, { accountId, graceMs: -1 }), { code: 'BAD_GRACE' })
  t.equal(await log.lastSeq(), 4)
})

t.test('a store that another projector follows sees the commands: the new key, and the revoked key reported', async (t) => {
  const { dir, log, deps } = setup(t)
  // The gateway's own store on the same log, as a second process would have it.
  const { Projector } = await import('../../src/projections/projector.js')
  const gatewayStore = StateStore.open(join(dir, 'gateway-state'))
  const touched = new Set<string>()
  const projector = new Projector(gatewayStore, log, {
    onApplied: (c) => {
      for (const h of c.keyHashes) touched.add(h)
    },
  })
  t.teardown(async () => {
    await projector.stop()
    await gatewayStore.close()
  })
  projector.start()
  // The follower applies what the log gets on its own: wait for it (bounded), and report how long
  // it took rather than assert a time (the contract's second is the speed of the machine here).
  const seen = async (what: string, done: () => boolean): Promise<void> => {
    const ms = await within(10_000, done, 5)
    t.not(ms, undefined, `${what}: applied by the follower`)
    t.comment(`${what}: applied after ${ms ?? '-'} ms`)
  }

  const created = await createAccount(deps, { wallet: WALLET, planId: 'tier-1', nodes: [{ network: 'eth-1', kind: 'full' }] })
  await seen('the new key', () => gatewayStore.keyByHash(hashApiKey(created.apiKey)) !== undefined)
  await regenerateKey(deps, { accountId: created.accountId })
  const oldHash = hashApiKey(created.apiKey)
  await seen('the old key revoked, and reported as touched', () => touched.has(oldHash) && gatewayStore.keyByHash(oldHash)?.revokedAt !== null)
})
