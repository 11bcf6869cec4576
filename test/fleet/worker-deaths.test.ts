import t from 'tap'
import { startAnvil } from '../../harness/anvil.js'
import { createAccountKey } from '../helpers/fleet.js'
import { startWorkersGateway } from '../helpers/gateway-process.js'
import { within } from '../helpers/eventually.js'
import { chainIdCall } from '../helpers/gateway.js'

// `tollgate start --workers 2`, workers killed by their pid one after another while clients call.
// The supervisor forwards the workers' fleet messages to each other (every fleet.syncMs): a
// message sent to a worker that had just died failed with EPIPE, emitted on a ChildProcess with
// no 'error' listener, and the supervisor exited with every worker. Now a death stays the dead
// worker's: the supervisor starts it again and the other serves meanwhile.

// Gateway processes started, restarted and killed: minutes on a loaded machine (tap's 120 s was hit
// at a load average of 15-19); each wait inside still ends a test that never gets there.
t.setTimeout(600_000)
const KILLS = 4
const CALLERS = 6
/** A call whose connection died with its worker is sent again, as clients do on a reset connection. */
const ATTEMPTS = 10

const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const { gateway: gw } = await startWorkersGateway(t, {
  workers: 2,
  config: {
    networks: { 'eth-1': { chainId: 31337, upstreams: [{ url: anvil.url, kind: 'full' }] } },
    // Fleet messages every millisecond: many of them cross each death.
    fleet: { syncMs: 1 },
    limits: { queueMs: 0, ipThrottle: { rejections: 1_000_000 } },
  },
})
// A plan with a rate: the workers share its consumption through the supervisor.
const { apiKey } = await createAccountKey(gw, 'tier-3')
let firstKillAt = 0
// Each worker learns the key when it has followed the log to it (within its 50 ms poll, more under
// load); until then it answers 401. The load starts once 20 calls in a row, each on a connection
// of its own (handed to either worker), were served.
const known = await within(30_000, async () => {
  for (let i = 0; i < 20; i++) {
    if ((await chainIdCall(gw.url('eth-1'), apiKey)).status !== 200) return false
  }
  return true
})
t.not(known, undefined, 'both workers serve the new key')

interface Tally {
  answered: number
  retried: number
  unanswered: string[]
  statuses: Set<number>
  /** Answers other than the node's or the plan's 429: status, body and when (ms since the first kill, or before it). */
  odd: string[]
}

/** One call on a connection of its own (Linux hands each new connection to one of the workers). */
async function call(tally: Tally): Promise<void> {
  let last = ''
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (attempt > 0) {
      tally.retried++
      await new Promise((r) => setTimeout(r, 50))
    }
    try {
      const { status, body } = await chainIdCall(gw.url('eth-1'), apiKey)
      tally.statuses.add(status)
      if (status !== 200 && status !== 429 && tally.odd.length < 5) {
        tally.odd.push(
          `${status} ${body.slice(0, 200)} (${firstKillAt === 0 ? 'before the first kill' : `${Date.now() - firstKillAt} ms after the first kill`})`,
        )
      }
      if (status === 200 && !body.includes('"result":"0x7a69"')) tally.unanswered.push(`wrong answer: ${body}`)
      tally.answered++
      return
    } catch (err) {
      // A connection refused or reset by a worker that died: nothing was answered on it.
      last = (err as Error).message
    }
  }
  tally.unanswered.push(last)
}

t.test('workers killed by their pid in a loop under load: every call is answered by the others', async (t) => {
  const tally: Tally = { answered: 0, retried: 0, unanswered: [], statuses: new Set(), odd: [] }
  let loading = true
  const load = Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (loading) await call(tally)
    }),
  )
  const killed: number[] = []
  for (let i = 0; i < KILLS; i++) {
    const worker = i % 2
    // The worker serving now: the newest 'ready' line of that index.
    const victim = gw.logs.filter((l) => l.msg === 'ready' && l.worker === worker).at(-1)!
    const before = tally.answered
    await within(30_000, () => tally.answered >= before + 20)
    process.kill(victim.pid, 'SIGKILL')
    firstKillAt ||= Date.now()
    killed.push(victim.pid)
    const exited = await gw.waitForLog((l) => l.msg === 'a worker exited: starting it again' && l.pid === victim.pid, 10_000)
    t.equal(exited.signal, 'SIGKILL', `worker ${worker} (pid ${victim.pid}) died of the kill, and the supervisor lives`)
    await gw.waitForLog((l) => l.msg === 'ready' && l.worker === worker && !killed.includes(l.pid), 60_000)
  }
  const before = tally.answered
  await within(30_000, () => tally.answered >= before + 20)
  loading = false
  await load
  t.same(tally.unanswered, [], `every call answered: ${tally.answered} answered, ${tally.retried} sent again after a reset connection`)
  t.same(
    [...tally.statuses].filter((s) => s !== 200 && s !== 429),
    [],
    `each with the node’s answer or the plan's 429: ${[...tally.statuses].join(', ')} ${tally.odd.join('; ')}`,
  )
  t.ok(tally.answered > KILLS * 20, `${tally.answered} calls answered`)
  t.equal(gw.logs.filter((l) => l.msg === 'a worker exited: starting it again').length, KILLS, 'no worker died but those killed')
  gw.signal('SIGTERM')
  t.same(await gw.exited, { code: 0, signal: null }, 'the supervisor stops gracefully at the end')
})
