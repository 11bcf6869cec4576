import t from 'tap'
import { foldAccount, NONCE_MEMORY_MS, type AccountState } from '../../src/accounts/account-state.js'
import { eventDecider } from '../helpers/given.js'
import { decide, type AccountCommand, type NewKey } from '../../src/accounts/decide.js'
import { makeEvent } from '../../src/events/make-event.js'
import type { EventInput, PlanEnded, TollgateEvent } from '../../src/events/types.js'
import { loadPlanCatalog } from '../../src/plans/catalog.js'

// The account's business rules as given / when / then: the events so far, a command, and the
// events it decides (or the refusal). Pure: no log, no clock, no store.

const catalog = loadPlanCatalog('default')
const A = 'acc_0123456789abcdef'
const WALLET = `0x${'ab'.repeat(20)}`
const T = 1_790_000_000_000
const key = (n: number): NewKey => ({ keyId: `key_${n}`, keyHash: String(n).repeat(64).slice(0, 64), keyCipher: `cipher-${n}` })
const at = (input: EventInput, time = T): TollgateEvent => makeEvent(input, time)
const plan = (id: string) => catalog.get(id)!

const given = eventDecider({
  fold: (events: TollgateEvent[]) => foldAccount(A, events),
  decide: (c: AccountCommand, s: AccountState) => decide(c, s, { catalog }),
})

const created = at({ type: 'AccountCreated', accountId: A, wallet: WALLET })
const issued = (n: number, time = T) => at({ type: 'KeyIssued', accountId: A, ...key(n) }, time)
const types = (events: Array<{ type: string }>) => events.map((e) => e.type)

t.test('OpenAccount: a new account gets its account, plan, nodes and key', async (t) => {
  const out = given()
    .when({ type: 'OpenAccount', wallet: WALLET, plan: plan('tier-3'), nodes: [], networks: undefined, key: key(1), now: T })
    .decided()
  t.same(types(out), ['AccountCreated', 'PlanActivated', 'NodesSelected', 'KeyIssued'])
})

t.test('OpenAccount again: an open account is left as it is; a Private Node its owner asked for is activated, the key kept', async (t) => {
  const open = (planId: string, n: number): AccountCommand => ({
    type: 'OpenAccount',
    wallet: WALLET,
    plan: plan(planId),
    nodes: [],
    networks: undefined,
    key: key(n),
    now: T + 5,
  })
  t.same(given(created, issued(1)).when(open('tier-3', 2)).decided(), [], 'a key: nothing to do')
  const running = at({ type: 'PlanActivated', accountId: A, planId: 'free-trial', startsAt: T, endsAt: T + 60_000 })
  t.same(given(created, running).when(open('tier-3', 2)).decided(), [], 'a running plan: nothing to do')
  t.same(types(given(created).when(open('tier-3', 2)).decided()), ['PlanActivated', 'NodesSelected', 'KeyIssued'], 'signed in only: opened')
  const requested = at({ type: 'PrivateNodeRequested', accountId: A, nodes: [{ network: 'eth-1', kind: 'full' }] })
  t.same(types(given(created, issued(1), requested).when(open('private', 2)).decided()), ['PlanActivated', 'NodesSelected'], 'no key revoked, none issued')
  t.same(given(created, issued(1)).when(open('private', 2)).decided(), [], 'a private plan nobody asked for: nothing')
})

t.test('RegenerateKey: the new key keeps the allowlist, the old one stops at now + grace', async (t) => {
  const restricted = at({ type: 'DomainsRestricted', accountId: A, keyId: 'key_1', domains: ['app.example.com'] })
  const out = given(created, issued(1), restricted)
    .when({ type: 'RegenerateKey', key: key(2), graceMs: 60_000, now: T + 10 })
    .decided()
  t.same(types(out), ['KeyIssued', 'DomainsRestricted', 'KeyRevoked'])
  t.match(out[1], { keyId: 'key_2', domains: ['app.example.com'] })
  t.match(out[2], { keyId: 'key_1', effectiveAt: T + 10 + 60_000 })
})

t.test('RegenerateKey of an account that does not exist is refused', async (t) => {
  t.match(
    given()
      .when({ type: 'RegenerateKey', key: key(2), graceMs: 0, now: T })
      .refused(),
    { name: 'UnknownAccountError' },
  )
})

t.test('ClaimFreePlan: once per account', async (t) => {
  const first = given(created)
    .when({ type: 'ClaimFreePlan', plan: plan('free-trial'), nodes: [], key: key(1), attempt: 'a', now: T })
    .decided()
  t.same(types(first), ['FreePlanClaimed', 'PlanActivated', 'NodesSelected', 'KeyIssued'])
  t.match(
    given(created, ...first)
      .when({ type: 'ClaimFreePlan', plan: plan('free-trial'), nodes: [], key: key(2), attempt: 'b', now: T + 1 })
      .refused(),
    { name: 'FreePlanUsedError' },
  )
})

const invoice = (id: string, planId = 'tier-1') =>
  at({
    type: 'InvoiceCreated',
    accountId: A,
    invoiceId: id,
    planId,
    nodes: [],
    network: 'eth-1',
    token: `0x${'a'.repeat(40)}`,
    treasury: `0x${'b'.repeat(40)}`,
    amount: '50',
    decimals: 6,
    priceUsd: 50,
  })
const transfer = {
  network: 'eth-1',
  txHash: `0x${'1'.repeat(64)}`,
  logIndex: 0,
  from: WALLET,
  amount: '50',
  blockNumber: 9,
  blockHash: `0x${'2'.repeat(64)}`,
  minedAt: T,
}

t.test('ConfirmPayment: pays and activates in one decision; the key only when there is none', async (t) => {
  const noKey = given(created, invoice('inv_a'))
    .when({ type: 'ConfirmPayment', invoiceId: 'inv_a', transfer, attempt: 'x', key: key(1), now: T + 1 })
    .decided()
  t.same(types(noKey), ['PaymentConfirmed', 'PlanActivated', 'NodesSelected', 'KeyIssued'])
  t.match(noKey[1], { planId: 'tier-1', startsAt: T + 1 })
  const withKey = given(created, issued(1), invoice('inv_a'))
    .when({ type: 'ConfirmPayment', invoiceId: 'inv_a', transfer, attempt: 'x', key: key(2), now: T + 1 })
    .decided()
  t.same(types(withKey), ['PaymentConfirmed', 'PlanActivated', 'NodesSelected'], 'an account with a key keeps it')
})

t.test('ConfirmPayment: one transfer pays one invoice', async (t) => {
  const paid = at({ type: 'PaymentConfirmed', accountId: A, invoiceId: 'inv_a', ...transfer, attempt: 'x' }, T + 1)
  const history = [created, invoice('inv_a'), invoice('inv_b', 'tier-3'), paid]
  t.match(
    given(...history)
      .when({ type: 'ConfirmPayment', invoiceId: 'inv_b', transfer, attempt: 'y', key: key(1), now: T + 2 })
      .refused(),
    { code: 'ALREADY_USED' },
  )
  const activated = at({ type: 'PlanActivated', accountId: A, planId: 'tier-1', startsAt: T + 1, endsAt: T + 1 + 30 * 86_400_000 }, T + 1)
  t.same(
    given(...history, activated)
      .when({ type: 'ConfirmPayment', invoiceId: 'inv_a', transfer, attempt: 'y', key: key(1), now: T + 2 })
      .decided(),
    [],
    'the same transfer for the same invoice again: nothing to do',
  )
  const finished = given(...history)
    .when({ type: 'ConfirmPayment', invoiceId: 'inv_a', transfer, attempt: 'y', key: key(1), now: T + 2 })
    .decided()
  t.same(types(finished), ['PlanActivated', 'NodesSelected', 'KeyIssued'], 'a payment whose activation was cut off gets it when asked again')
  t.match(finished[0], { startsAt: T + 1 })
  const other = { ...transfer, txHash: `0x${'3'.repeat(64)}` }
  t.match(
    given(...history)
      .when({ type: 'ConfirmPayment', invoiceId: 'inv_a', transfer: other, attempt: 'y', key: key(1), now: T + 2 })
      .refused(),
    { code: 'INVOICE_PAID' },
  )
})

const TTL = 30 * 60_000
/** An invoice of version 2: its terms hold until `createdAt + TTL`. */
const expiring = (id: string, createdAt = T) => at({ ...(invoice(id) as EventInput), expiresAt: createdAt + TTL } as EventInput, createdAt)
const pay = (invoiceId: string, minedAt: number, now: number): AccountCommand => ({
  type: 'ConfirmPayment',
  invoiceId,
  transfer: { ...transfer, minedAt },
  attempt: 'x',
  key: key(1),
  now,
})

t.test('invoice expiry: a transfer mined before the invoice expires pays it, however late it is checked', async (t) => {
  const lateCheck = given(created, expiring('inv_a'))
    .when(pay('inv_a', T + TTL, T + 5 * TTL))
    .decided()
  t.same(types(lateCheck), ['PaymentConfirmed', 'PlanActivated', 'NodesSelected', 'KeyIssued'], 'mined at the last millisecond, checked two hours later')
  t.match(lateCheck[0], { minedAt: T + TTL }, 'the event says when it was mined')
  t.same(
    types(
      given(created, invoice('inv_v1'))
        .when(pay('inv_v1', T + 100 * TTL, T + 100 * TTL))
        .decided(),
    ).slice(0, 1),
    ['PaymentConfirmed'],
    'a version 1 invoice has no expiry',
  )
})

t.test('invoice expiry: a transfer mined after it is recorded as unmatched, once, and pays nothing', async (t) => {
  const out = given(created, expiring('inv_a'))
    .when(pay('inv_a', T + TTL + 1000, T + TTL + 60_000))
    .decided()
  t.same(types(out), ['PaymentUnmatched'])
  t.match(out[0], {
    invoiceId: 'inv_a',
    reason: 'invoice-expired',
    invoiceExpiresAt: T + TTL,
    minedAt: T + TTL + 1000,
    txHash: transfer.txHash,
    logIndex: 0,
    amount: '50',
  })
  const state = foldAccount(A, [created, expiring('inv_a'), ...out])
  t.equal(state.invoices.get('inv_a')!.paid, null, 'the invoice stays unpaid')
  t.equal(state.plan, null, 'and no plan starts')
  t.same(
    given(created, expiring('inv_a'), ...out)
      .when(pay('inv_a', T + TTL + 1000, T + TTL + 90_000))
      .decided(),
    [],
    'offered again for the same invoice: recorded once',
  )
})

t.test('invoice expiry: a late transfer, recorded, still pays a fresh invoice', async (t) => {
  const unmatched = given(created, expiring('inv_a'))
    .when(pay('inv_a', T + TTL + 1000, T + TTL + 60_000))
    .decided()
  const fresh = expiring('inv_b', T + TTL + 120_000)
  const out = given(created, expiring('inv_a'), ...unmatched, fresh)
    .when(pay('inv_b', T + TTL + 1000, T + TTL + 130_000))
    .decided()
  t.same(types(out), ['PaymentConfirmed', 'PlanActivated', 'NodesSelected', 'KeyIssued'])
  t.match(out[0], { invoiceId: 'inv_b' })
  const paid = given(created, expiring('inv_a'), ...unmatched, fresh, ...out)
  t.match(paid.when(pay('inv_a', T + TTL + 1000, T + TTL + 140_000)).refused(), { code: 'ALREADY_USED' }, 'once used, it is refused for the expired one too')
})

t.test('ActivatePaidInvoice: finishes a paid invoice, unless a later activation overtook it', async (t) => {
  const paid = at({ type: 'PaymentConfirmed', accountId: A, invoiceId: 'inv_a', ...transfer, attempt: 'x' }, T + 1)
  const pending = given(created, issued(1), invoice('inv_a'), paid)
    .when({ type: 'ActivatePaidInvoice', invoiceId: 'inv_a', key: key(2), now: T + 5 })
    .decided()
  t.same(types(pending), ['PlanActivated', 'NodesSelected'])
  t.match(pending[0], { startsAt: T + 1 }, 'the period starts when it was paid')
  const later = at({ type: 'PlanActivated', accountId: A, planId: 'tier-3', startsAt: T + 3, endsAt: null }, T + 3)
  t.same(
    given(created, issued(1), invoice('inv_a'), paid, later)
      .when({ type: 'ActivatePaidInvoice', invoiceId: 'inv_a', key: key(2), now: T + 5 })
      .decided(),
    [],
  )
})

t.test('SignIn: a nonce is used once; a new wallet gets its account', async (t) => {
  const signIn = (nonce: string, now = T): AccountCommand => ({
    type: 'SignIn',
    wallet: WALLET,
    nonce,
    sessionHash: `h-${nonce}`,
    expiresAt: now + 1000,
    chainId: 1,
    signer: 'eoa',
    now,
  })
  t.same(types(given().when(signIn('n1')).decided()), ['AccountCreated', 'SignedIn'])
  const signedIn = at({ type: 'SignedIn', accountId: A, wallet: WALLET, nonce: 'n1', sessionHash: 'h-n1', expiresAt: T + 1000 })
  t.match(
    given(created, signedIn)
      .when(signIn('n1', T + 1))
      .refused(),
    { code: 'NONCE_USED' },
  )
  t.same(
    types(
      given(created, signedIn)
        .when(signIn('n2', T + 1))
        .decided(),
    ),
    ['SignedIn'],
  )
  // A nonce lives 10 minutes; the state forgets it after NONCE_MEMORY_MS, when it is expired anyway.
  const muchLater = at(
    { type: 'SignedIn', accountId: A, wallet: WALLET, nonce: 'n3', sessionHash: 'h-n3', expiresAt: T + NONCE_MEMORY_MS + 2000 },
    T + NONCE_MEMORY_MS + 1,
  )
  t.equal(foldAccount(A, [created, signedIn, muchLater]).nonces.has('n1'), false, 'old nonces are not kept for ever')
})

t.test('SignOut: only a session the account has', async (t) => {
  const signedIn = at({ type: 'SignedIn', accountId: A, wallet: WALLET, nonce: 'n1', sessionHash: 'h1', expiresAt: T + 1000 })
  t.same(
    types(
      given(created, signedIn)
        .when({ type: 'SignOut', sessionHash: 'h1', now: T + 1 })
        .decided(),
    ),
    ['SignedOut'],
  )
  t.same(
    given(created, signedIn)
      .when({ type: 'SignOut', sessionHash: 'other', now: T + 1 })
      .decided(),
    [],
  )
})

t.test('RestrictDomains needs an active key', async (t) => {
  t.match(
    given(created)
      .when({ type: 'RestrictDomains', domains: ['a.example'], now: T })
      .refused(),
    { name: 'NoActiveKeyError' },
  )
  t.match(
    given(created, issued(1))
      .when({ type: 'RestrictDomains', domains: ['a.example'], now: T })
      .decided(),
    [{ type: 'DomainsRestricted', keyId: 'key_1' }],
  )
})

t.test('RegenerateKey: at most 10 an hour, and at most 3 live keys (the oldest in grace ends now)', async (t) => {
  const history: TollgateEvent[] = [created, issued(0)]
  let live = foldAccount(A, history)
  for (let i = 1; i <= 10; i++) {
    const out = decide({ type: 'RegenerateKey', key: key(i), graceMs: 3_600_000, now: T + i }, live, { catalog })
    history.push(...out)
    live = foldAccount(A, history)
    const alive = [...live.keys.values()].filter((k) => k.revokedAt === null || k.revokedAt > T + i)
    t.ok(alive.length <= 3, `after regeneration ${i}: ${alive.length} live keys`)
  }
  t.match(
    given(...history)
      .when({ type: 'RegenerateKey', key: key(11), graceMs: 0, now: T + 11 })
      .refused(),
    { code: 'TOO_MANY_REGENERATIONS' },
  )
  t.same(
    types(
      given(...history)
        .when({ type: 'RegenerateKey', key: key(11), graceMs: 0, now: T + 3_600_002 })
        .decided(),
    ).slice(0, 1),
    ['KeyIssued'],
    'an hour later it is allowed again',
  )
  const revokedNow = history.filter((e) => e.type === 'KeyRevoked' && e.effectiveAt === e.time)
  t.ok(revokedNow.length > 0, 'keys pushed out of their grace are revoked at once')
  t.equal(new Set(history.map((e) => e.id)).size, history.length, 'a second revocation of a key is its own event (another id)')
})

t.test('a late PlanEnded of an expired period does not end the renewal that followed it', async (t) => {
  const first = at({ type: 'PlanActivated', accountId: A, planId: 'tier-1', startsAt: T, endsAt: T + 1000 })
  const renewal = at({ type: 'PlanActivated', accountId: A, planId: 'tier-1', startsAt: T + 1000, endsAt: T + 2000 }, T + 1000)
  const lateEnd = makeEvent({ type: 'PlanEnded', accountId: A, planId: 'tier-1', reason: 'expired', startsAt: T }, T + 1000)
  t.same(foldAccount(A, [created, first, renewal, lateEnd]).plan, { planId: 'tier-1', startsAt: T + 1000, endsAt: T + 2000 })
  t.equal(foldAccount(A, [created, first, lateEnd]).plan, null, 'it ends the period it names')
  const v1: PlanEnded = { ...lateEnd, version: 1, startsAt: undefined }
  t.equal(foldAccount(A, [created, first, renewal, v1]).plan, null, 'a version 1 event (no startsAt) ends the plan it names, as before')
})

const jwtKey = (kid: string) => ({ kid, alg: 'ES256' as const, publicKey: `-----BEGIN PUBLIC KEY-----\n${kid}\n-----END PUBLIC KEY-----\n` })
const registered = (kid: string) => at({ type: 'JwtKeyRegistered', accountId: A, ...jwtKey(kid) })

t.test('RegisterJwtKey: at most 3, one per kid; RemoveJwtKey: only a registered kid', async (t) => {
  t.match(
    given(created)
      .when({ type: 'RegisterJwtKey', key: jwtKey('a'), now: T })
      .decided(),
    [{ type: 'JwtKeyRegistered', kid: 'a', alg: 'ES256' }],
  )
  t.match(
    given(created, registered('a'))
      .when({ type: 'RegisterJwtKey', key: jwtKey('a'), now: T })
      .refused(),
    { code: 'BAD_JWT_KEY', message: /already registered/ },
  )
  const three = [registered('a'), registered('b'), registered('c')]
  t.match(
    given(created, ...three)
      .when({ type: 'RegisterJwtKey', key: jwtKey('d'), now: T })
      .refused(),
    { code: 'BAD_JWT_KEY', message: /at most 3/ },
  )
  const removed = at({ type: 'JwtKeyRemoved', accountId: A, kid: 'b' })
  t.match(
    given(created, ...three, removed)
      .when({ type: 'RegisterJwtKey', key: jwtKey('d'), now: T })
      .decided(),
    [{ kid: 'd' }],
    'room again after a removal',
  )
  t.match(
    given(created, ...three, removed)
      .when({ type: 'RemoveJwtKey', kid: 'b', now: T })
      .refused(),
    { code: 'BAD_JWT_KEY', message: /not registered/ },
  )
  t.match(
    given(created, ...three)
      .when({ type: 'RemoveJwtKey', kid: 'b', now: T })
      .decided(),
    [{ type: 'JwtKeyRemoved', kid: 'b' }],
  )
})

t.test('RequireToken: needs a registered key; said once; a regenerated key keeps it', async (t) => {
  t.match(given(created, issued(1)).when({ type: 'RequireToken', required: true, now: T }).refused(), { code: 'BAD_JWT_KEY', message: /register one first/ })
  t.match(given(created, registered('a')).when({ type: 'RequireToken', required: true, now: T }).refused(), { name: 'NoActiveKeyError' })
  const required = at({ type: 'KeyTokenRequired', accountId: A, keyId: 'key_1', required: true })
  t.match(given(created, issued(1), registered('a')).when({ type: 'RequireToken', required: true, now: T }).decided(), [
    { type: 'KeyTokenRequired', keyId: 'key_1', required: true },
  ])
  t.same(given(created, issued(1), registered('a'), required).when({ type: 'RequireToken', required: true, now: T }).decided(), [], 'already required: nothing')
  t.match(given(created, issued(1), registered('a'), required).when({ type: 'RequireToken', required: false, now: T }).decided(), [{ required: false }])
  const out = given(created, issued(1), registered('a'), required)
    .when({ type: 'RegenerateKey', key: key(2), graceMs: 0, now: T + 10 })
    .decided()
  t.same(types(out), ['KeyIssued', 'KeyTokenRequired', 'KeyRevoked'])
  t.match(out[1], { keyId: 'key_2', required: true })
})
