import t from 'tap'
import { NodeCapacity, perAccount, type CallFor } from '../../src/upstream/node-capacity.js'
import { NodeBusy } from '../../src/upstream/errors.js'

// The slots of one node, with nothing sent: who gets a slot, in which order, and when a call is
// refused. The order is checked by what resolves, never by time.

/** An account as the call path hands it on (the store's record has these two fields). */
const accounts = new Map<string, CallFor>()
const acct = (id: string, planId = 'tier-1'): CallFor => {
  let a = accounts.get(id)
  if (a === undefined) accounts.set(id, (a = { accountId: id, plan: { planId } }))
  return a
}

const capacity = (maxInFlight: number, instances = 1, waitMs = 60_000) => new NodeCapacity({ maxInFlight, waitMs, instances: () => instances, node: 'n' })

t.test('one account holds at most three quarters of the slots; another finds one free', async (t) => {
  t.same([1, 2, 3, 4, 8, 100].map(perAccount), [1, 1, 2, 3, 6, 75])
  const c = capacity(4)
  for (let i = 0; i < 3; i++) t.equal(c.acquire(acct('a'), 1000), undefined, `a's call ${i + 1}: at once`)
  t.notOk(c.hasRoom(acct('a')), 'a holds its three')
  const fourth = c.acquire(acct('a'), 60_000)
  t.type(fourth, Promise, "a's fourth waits although a slot is free")
  t.equal(c.acquire(acct('b'), 1000), undefined, 'b takes the free slot at once')
  t.equal(c.inUse, 4)
  c.release(acct('b'))
  t.equal(c.waiting, 1, "b's slot freed: a still holds its share, its fourth keeps waiting")
  c.release(acct('a'))
  await fourth
  t.equal(c.waiting, 0, "one of a's freed: its fourth goes")
})

t.test('a freed slot goes to the waiting accounts in turn, not to the one that sent most', async (t) => {
  const c = capacity(1)
  t.equal(c.acquire(acct('x'), 1000), undefined)
  const order: string[] = []
  const wait = (account: string, n: number) => c.acquire(acct(account), 60_000)!.then(() => order.push(`${account}${n}`))
  const waits = [wait('a', 1), wait('a', 2), wait('a', 3), wait('b', 1), wait('c', 1), wait('b', 2)]
  c.release(acct('x'))
  for (let i = 0; i < waits.length; i++) {
    await new Promise((r) => setImmediate(r))
    c.release(acct(order[order.length - 1][0]))
  }
  await Promise.all(waits)
  t.same(order, ['a1', 'b1', 'c1', 'a2', 'b2', 'a3'])
})

t.test("a fleet's instances share the slots; a call that waits too long is refused with NodeBusy", async (t) => {
  t.equal(capacity(10, 3).limit(), 3, 'floor(10 / 3)')
  t.equal(capacity(2, 5).limit(), 1, 'at least one each')
  const c = capacity(1, 1, 20)
  t.equal(c.acquire(acct('a'), 20), undefined)
  const err = await c.acquire(acct('b'), 20)!.catch((e: unknown) => e)
  t.type(err, NodeBusy)
  t.match((err as Error).message, /all 1 slots of this instance stayed taken for \d+ ms/)
  t.same({ waiting: c.waiting, refused: c.counters.refused }, { waiting: 0, refused: 1 })
  t.same(c.byPlan.get('tier-1')?.refused, 1, 'counted by the plan of the account that waited')
})
