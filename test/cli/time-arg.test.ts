import t from 'tap'
import { UsageError } from '../../src/cli/errors.js'
import { parseTimeArg } from '../../src/cli/time-arg.js'

// --since and --until of `tollgate usage`: UTC whatever the machine's time zone, or a duration ago.
const NOW = Date.UTC(2025, 5, 15, 12, 30)
// A zone off UTC, so that a date-time read as local time would fail here (Node applies TZ at once).
process.env.TZ = 'America/New_York'

t.test('ISO dates and date-times are UTC unless they carry an offset', async (t) => {
  t.equal(parseTimeArg('usage', 'since', '2025-06-01', NOW), Date.UTC(2025, 5, 1))
  t.equal(parseTimeArg('usage', 'since', '2025-06-01T12:00', NOW), Date.UTC(2025, 5, 1, 12))
  t.equal(parseTimeArg('usage', 'since', '2025-06-01T12:00:30.5Z', NOW), Date.UTC(2025, 5, 1, 12, 0, 30, 500))
  t.equal(parseTimeArg('usage', 'since', '2025-06-01T14:00+02:00', NOW), Date.UTC(2025, 5, 1, 12))
})

t.test('durations count back from now', async (t) => {
  t.equal(parseTimeArg('usage', 'since', '30m', NOW), NOW - 30 * 60_000)
  t.equal(parseTimeArg('usage', 'since', '24h', NOW), NOW - 86_400_000)
  t.equal(parseTimeArg('usage', 'since', '7d', NOW), NOW - 7 * 86_400_000)
  t.equal(parseTimeArg('usage', 'until', '2w', NOW), NOW - 14 * 86_400_000)
})

t.test('anything else is refused, naming the option and the forms it takes', async (t) => {
  for (const bad of ['yesterday', '2025-02-30', '2025-13-01', '06/01/2025', '24', '-1d', '1y', '2025-06-01T12', '']) {
    t.throws(() => parseTimeArg('usage', 'until', bad, NOW), UsageError, JSON.stringify(bad))
  }
  t.throws(() => parseTimeArg('usage', 'until', '2025-02-30', NOW), {
    message:
      'tollgate usage: --until must be an ISO date or date-time in UTC (2025-06-01, 2025-06-01T12:00) or a duration ago (30m, 24h, 7d, 2w), got "2025-02-30"',
  })
})
