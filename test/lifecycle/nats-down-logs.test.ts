import t from 'tap'
import { request } from 'undici'
import { startAnvil } from '../../harness/anvil.js'
import { startNats } from '../../harness/nats-server.js'
import { runCli, within } from '../helpers/cli.js'
import { TEST_SECRET } from '../helpers/gateway.js'
import { restartableConfig, startGatewayProcess } from '../helpers/gateway-process.js'
import { metricValue } from '../helpers/fleet.js'

// A gateway started while NATS is down serves from its projections, as docs/operations.md says.
// Its log said so with a stack trace at error level (the projector's first read) and a warning
// for each append the outbox retried, one a second under traffic. A documented outage is one
// warning, then its state every events.outageLogEveryMs (30 s by default; 5 s here, so that the
// test does not wait twice 30 s), then a line when it ends.

t.setTimeout(240_000)
const EVERY_S = 5
const env = { TOLLGATE_SECRET: TEST_SECRET }
const anvil = await startAnvil()
t.teardown(() => anvil.stop())
const nats = await startNats()
t.teardown(() => nats.stop())

t.test('NATS down at start: one warning, its state every period, and a line when it is back', async (t) => {
  const config = await restartableConfig(t, { natsUrl: nats.url, nodeUrl: anvil.url, usageIntervalMs: 200 })
  ;(config.events as Record<string, unknown>).outageLogEveryMs = EVERY_S * 1000
  // The key is made while NATS is up (the command line projects it into the data folder)...
  const first = await startGatewayProcess(t, { config })
  const created = await runCli(['accounts', 'create', '--config', first.configPath, '--wallet', `0x${'5'.repeat(40)}`, '--plan', 'tier-3'], env)
  t.equal(created.code, 0, created.stderr)
  first.signal('SIGTERM')
  await first.exited
  // ...and the gateway starts after NATS went away.
  await nats.kill()
  const gw = await startGatewayProcess(t, { config })
  const url = `${gw.url('eth-1')}?apikey=${created.last.apiKey}`

  // Traffic all along: every interval's usage goes to the outbox, which retries its appends.
  const statuses: number[] = []
  let calling = true
  const caller = (async () => {
    while (calling) {
      const res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}',
      })
      await res.body.text()
      statuses.push(res.statusCode)
      // Paced, not a flood: what matters is that usage keeps coming.
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })()
  t.teardown(() => {
    calling = false
    return caller
  })

  const still = await gw
    .waitForLog((l) => l.msg === 'NATS still unreachable: serving from the last projected state', 60_000)
    .catch((err: Error) => {
      const warnings = gw.logs.filter((l) => l.level === 40).length
      const errors = gw.logs.filter((l) => l.level >= 50).length
      t.fail(`no state line: ${err.message.slice(0, 60)}; the log had ${warnings} warnings and ${errors} errors meanwhile`)
    })
  if (still === undefined) return
  t.ok(still.downForS >= EVERY_S, `the state after ${still.downForS} s`)
  t.ok(still.eventsWaiting > 0, `with the events waiting in the outbox: ${still.eventsWaiting}`)
  t.ok(still.failures > 1, `the outbox retried meanwhile: ${still.failures} failures reported, not logged`)
  const upToStill = gw.logs.slice(0, gw.logs.indexOf(still) + 1)
  // Lines about the nodes aside, and the start's word that eth-1's one node has no WebSocket.
  const warnings = upToStill.filter((l) => l.level >= 40 && !/^node |^no node of eth-1 has a WebSocket/.test(l.msg))
  t.same(
    warnings.map((l) => l.msg),
    ['NATS is unreachable: serving from the last projected state; events wait in the outbox until it is back'],
    'one warning until the state line',
  )
  t.same(
    upToStill.filter((l) => l.level >= 50 || JSON.stringify(l).includes('"stack"')),
    [],
    'no error, no stack trace',
  )
  t.ok(statuses.length > 0 && statuses.every((s) => s === 200), `${statuses.length} calls served meanwhile, all 200`)

  await nats.restart()
  const back = await gw.waitForLog((l) => l.msg === 'NATS is back: the outbox sends the events it kept', 30_000)
  t.ok(back.level === 30 && back.downForS >= EVERY_S, `said when it ends, after ${back.downForS} s`)
  t.not(await within(20_000, async () => (await metricValue(gw, 'tollgate_outbox_pending_events')) === 0), undefined, 'the outbox empties')

  // NATS lost again while serving: the same, once more (the fleet says once that it is cut off).
  const mark = gw.logs.length
  await nats.kill()
  const again = await gw.waitForLog((l) => gw.logs.indexOf(l) >= mark && l.msg === 'NATS still unreachable: serving from the last projected state', 60_000)
  const during = gw.logs.slice(mark, gw.logs.indexOf(again) + 1)
  t.same(
    during.filter((l) => l.level >= 40 && !/^cut off from the fleet/.test(l.msg)).map((l) => l.msg),
    ['NATS is unreachable: serving from the last projected state; events wait in the outbox until it is back'],
    'one warning for the second outage, then its state',
  )
  t.ok(during.filter((l) => /^cut off from the fleet/.test(l.msg)).length <= 2, "the fleet's own line about its limits, once")
  t.same(
    during.filter((l) => l.level >= 50),
    [],
    'no error',
  )
  calling = false
  await caller
  t.ok(
    statuses.every((s) => s === 200),
    `${statuses.length} calls, all 200`,
  )
})
