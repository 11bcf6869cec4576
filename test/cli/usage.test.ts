import t from 'tap'
import { anvilGateway } from '../helpers/anvil-gateway.js'
import { TEST_SECRET } from '../helpers/gateway.js'
import { begun, runCli } from '../helpers/cli.js'
import { callWithTwoKeys, replayCommand, sumsOf, usageFromEventsCommand, usageJson } from './usage-scenario.js'

// `tollgate usage` beside a running gateway on the embedded log: its figures are the sums of the
// UsageRecorded events that `tollgate events` prints, exactly, before and after a replay.
// Each command is its own process (as an operator runs it): on a busy machine they add up. The
// commands that only read the log while the gateway serves (nothing appends usage once the calls
// are counted) run at once; the replay's test runs its own after the gateway stopped.
t.setTimeout(240_000)
// The scenario makes the keys: usage lists only theirs.
const { tg } = await anvilGateway(t, { nodeWs: false, archive: true, usageIntervalMs: 200, plan: null })
const env = { TOLLGATE_SECRET: TEST_SECRET }
const [a, b] = await callWithTwoKeys(tg)
const tableRun = begun(runCli(['usage', '--config', tg.configPath], env))
const badRun = (args: string[]) => begun(runCli(['usage', '--config', tg.configPath, ...args], env))
const badRuns = [
  { args: ['--by', 'week'], message: /--by must be hour or day, got "week"/, code: 2 },
  {
    args: ['--since', 'yesterday'],
    message: /--since must be an ISO date .*\(2025-06-01, 2025-06-01T12:00\) or a duration ago \(30m, 24h, 7d, 2w\), got "yesterday"/,
    code: 2,
  },
  { args: ['--since', '1d', '--until', '2d'], message: /--until .* must be after --since/, code: 2 },
  { args: ['--account', 'acc_typo'], message: /no account "acc_typo"/, code: 1 },
].map((bad) => ({ ...bad, out: badRun(bad.args) }))
const plainRun = begun(usageJson(tg.configPath))
const byHourRun = begun(usageJson(tg.configPath, ['--by', 'hour']))
const untilRun = begun(usageJson(tg.configPath, ['--until', '2000-01-01T00:00']))
const events = await usageFromEventsCommand(tg.configPath)

t.test('usage --json: one line per key, the sums of UsageRecorded in the log', async (t) => {
  const lines = await plainRun
  t.same(lines, sumsOf(events))
  t.equal(lines.length, 2)
  for (const key of [a!, b!]) {
    t.match(
      lines.find((l) => l.keyId === key.keyId),
      { accountId: key.accountId, requests: key.calls, errors: key.errors },
      'every call counted, once, with its error',
    )
  }
  for (const l of lines) t.equal(l.bytesIn > 100 && l.bytesOut > 100, true, `${l.keyId}: bytes in and out counted (${l.bytesIn}, ${l.bytesOut})`)
  t.same(Object.keys(lines[0]!), ['keyId', 'accountId', 'requests', 'units', 'errors', 'bytesIn', 'bytesOut'])
})

t.test('--by, --since, --until, --account and --key narrow to the same sums', async (t) => {
  const lastHour = Math.max(...events.map((e) => e.intervalStart - (e.intervalStart % 3_600_000)))
  // --since and --key depend on the events read above; the four runs go at once.
  const [byHour, sinceAccount, until, keyByDay] = await Promise.all([
    byHourRun,
    usageJson(tg.configPath, ['--since', new Date(lastHour).toISOString(), '--account', a!.accountId]),
    untilRun,
    usageJson(tg.configPath, ['--key', b!.keyId, '--by', 'day', '--since', '2h']),
  ])
  t.same(byHour, sumsOf(events, { by: 'hour' }))
  t.same(
    sinceAccount,
    sumsOf(
      events.filter((e) => e.accountId === a!.accountId),
      { fromHour: lastHour },
    ),
    '--since an ISO time: from its hour on; --account: that account only',
  )
  t.same(until, [], '--until before any usage: nothing')
  t.same(
    keyByDay,
    sumsOf(
      events.filter((e) => e.keyId === b!.keyId),
      { by: 'day' },
    ),
  )
})

t.test('the table shows account, key, calls, units, errors and bytes per key, and a total', async (t) => {
  const out = await tableRun
  t.equal(out.code, 0, out.stderr)
  const rows = out.stdout
    .trimEnd()
    .split('\n')
    .map((l) => l.split(/\s{2,}/))
  t.same(rows[0], ['account', 'key', 'calls', 'units', 'errors', 'bytes in', 'bytes out'])
  const sums = sumsOf(events)
  t.same(
    rows.slice(1, 3),
    sums.map((l) => [l.accountId, l.keyId, String(l.requests), String(l.units), String(l.errors), String(l.bytesIn), String(l.bytesOut)]),
  )
  const total = (f: 'requests' | 'units' | 'errors' | 'bytesIn' | 'bytesOut') => String(sums.reduce((n, l) => n + l[f], 0))
  t.same(rows[3], ['total', total('requests'), total('units'), total('errors'), total('bytesIn'), total('bytesOut')])
  t.equal(total('requests'), '15')
})

t.test('bad arguments are refused with what to write instead', async (t) => {
  for (const bad of badRuns) {
    const out = await bad.out
    t.equal(out.code, bad.code, bad.args.join(' '))
    t.match(out.stderr, bad.message)
  }
})

t.test('after a replay from the log, the same figures', async (t) => {
  await tg.stop() // a replay runs with the gateway stopped
  // Both read the stopped gateway's folder; so do both after the replay.
  const [after, before] = await Promise.all([usageFromEventsCommand(tg.configPath), usageJson(tg.configPath, ['--by', 'hour'])])
  t.same(after, events, 'the gateway appended no usage since')
  await replayCommand(tg.configPath)
  const [byHour, plain] = await Promise.all([usageJson(tg.configPath, ['--by', 'hour']), usageJson(tg.configPath)])
  t.same(byHour, before)
  t.same(before, sumsOf(after, { by: 'hour' }))
  t.same(plain, sumsOf(after))
})
