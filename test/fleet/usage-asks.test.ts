import { randomBytes } from 'node:crypto'
import { pack } from 'msgpackr'
import t from 'tap'
import { startNats } from '../../harness/nats-server.js'
import { FleetBus } from '../../src/fleet/fleet-bus.js'
import { UsageUnavailable } from '../../src/usage/errors.js'
import { answerUsageAsks, USAGE_ANSWERERS, UsageAsker, usageSubjects } from '../../src/usage/usage-answers.js'
import { accountUsageView } from '../../src/usage/usage-view.js'
import { waitFor } from '../helpers/eventually.js'
import { openLedger } from '../helpers/ledger.js'

/*
 * The usage asks over a real nats-server, without gateways: the answerers' queue group, the
 * asker's time-out (made tiny here) and its bound on the asks that wait, and the answerer's
 * refusal to answer onto any subject but an asker's.
 */
const nats = await startNats({ monitor: true })
t.teardown(() => nats.stop())
const { store } = await openLedger(t)

/** A connected bus on `root`, closed at the end. */
async function busOn(root: string): Promise<FleetBus> {
  const bus = FleetBus.open(nats.url, root, () => {})
  t.teardown(() => bus.close())
  await waitFor(() => bus.connected, 'the bus to connect')
  return bus
}
const newRoot = () => `tollgate_fleet.U${randomBytes(4).toString('hex')}`

/** The subscriptions of `subject` the server has, with their queue group. */
async function subscriptionsOf(subject: string): Promise<{ subject: string; qgroup?: string }[]> {
  const subsz = (await (await fetch(`${nats.monitorUrl}/subsz?subs=1&test=${encodeURIComponent(subject)}`)).json()) as {
    subscriptions_list?: { subject: string; qgroup?: string }[]
  }
  return (subsz.subscriptions_list ?? []).filter((s) => s.subject === subject)
}

t.test('two answerers take the asks in one queue group; an ask gets the view of their store', async (t) => {
  const root = newRoot()
  for (let i = 0; i < 2; i++) answerUsageAsks(await busOn(root), root, store, (err) => t.fail(String(err)))
  const asker = new UsageAsker({ bus: await busOn(root), subjectRoot: root, instance: 'b.example.com' })
  t.teardown(() => asker.close())
  await waitFor(async () => (await subscriptionsOf(usageSubjects(root).ask)).length === 2, 'both answerers subscribed')
  t.same(
    (await subscriptionsOf(usageSubjects(root).ask)).map((s) => s.qgroup),
    [USAGE_ANSWERERS, USAGE_ANSWERERS],
    'one queue group: NATS hands each ask to one of them',
  )
  const now = Date.now()
  t.same(await asker.ask('acc-1', 24, now), accountUsageView(store, 'acc-1', 24, now))
  t.equal(asker.pending, 0)
})

t.test('with no answerer, an ask fails with "no answer" once its time-out passes', async (t) => {
  const root = newRoot()
  const asker = new UsageAsker({ bus: await busOn(root), subjectRoot: root, instance: 'b', timeoutMs: 20 })
  t.teardown(() => asker.close())
  const err = await asker.ask('acc-1', 24, Date.now()).catch((e: unknown) => e)
  t.ok(err instanceof UsageUnavailable)
  t.equal((err as UsageUnavailable).reason, 'no answer')
  t.equal(asker.pending, 0, 'nothing left waiting')
})

t.test('past maxPending asks waiting, the next fails at once; close fails those waiting', async (t) => {
  const root = newRoot()
  const asker = new UsageAsker({ bus: await busOn(root), subjectRoot: root, instance: 'b', timeoutMs: 600_000, maxPending: 4 })
  const waiting = Array.from({ length: 4 }, () => asker.ask('acc-1', 24, Date.now()).catch((e: UsageUnavailable) => e.reason))
  t.equal(asker.pending, 4)
  const over = await asker.ask('acc-1', 24, Date.now()).catch((e: UsageUnavailable) => e.reason)
  t.equal(over, 'too many asks')
  t.equal(asker.pending, 4, 'the refused ask took no place')
  asker.close()
  t.same(await Promise.all(waiting), ['closing', 'closing', 'closing', 'closing'])
  t.equal(asker.pending, 0)
})

t.test("an ask whose reply subject is not an asker's is not answered", async (t) => {
  const root = newRoot()
  answerUsageAsks(await busOn(root), root, store, (err) => t.fail(String(err)))
  await waitFor(async () => (await subscriptionsOf(usageSubjects(root).ask)).length === 1, 'the answerer subscribed')
  const bus = await busOn(root)
  const asker = new UsageAsker({ bus, subjectRoot: root, instance: 'b' })
  t.teardown(() => asker.close())
  let landed = 0
  bus.subscribe(bus.subjects.limits, () => landed++)
  await waitFor(async () => (await subscriptionsOf(bus.subjects.limits)).length === 1, 'the limits subscription')
  bus.publish(usageSubjects(root).ask, pack({ id: 'x', replyTo: bus.subjects.limits, accountId: 'acc-1', hours: 24, now: Date.now() }))
  // From one connection to one answerer, and back to one connection, in order: once the second
  // ask's answer is here, an answer to the first would have landed before it.
  await asker.ask('acc-1', 24, Date.now())
  t.equal(landed, 0, 'nothing published on the limits subject')
})
