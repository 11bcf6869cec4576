import { UsageError } from './errors.js'

const UNIT_MS: Readonly<Record<string, number>> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }
const DURATION = /^(\d+)([mhdw])$/
/** A date, or a date and time with minutes, optional seconds and fraction, optional offset. */
const ISO = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?$/

/**
 * A time given on the command line (`--since`, `--until`): an ISO 8601 date or date-time, in UTC
 * unless it carries an offset (`2025-06-01`, `2025-06-01T12:00`, `2025-06-01T14:00+02:00`), or a
 * duration before `now` (`30m`, `24h`, `7d`, `2w`). Returns ms since the epoch.
 * @throws UsageError naming the option and the accepted forms
 * @example
 * parseTimeArg('usage', 'since', '7d', Date.now())
 */
export function parseTimeArg(command: string, name: string, value: string, now: number): number {
  const duration = DURATION.exec(value)
  if (duration) return now - Number(duration[1]) * UNIT_MS[duration[2]!]!
  // Date.parse reads a date-time without an offset as local time: make UTC the rule, whatever
  // the operator's machine is set to, as the periods printed are UTC.
  const utc = ISO.test(value) && value.includes('T') && !/(Z|[+-]\d{2}:\d{2})$/.test(value) ? `${value}Z` : value
  const ms = ISO.test(value) && isCalendarDate(value) ? Date.parse(utc) : NaN
  if (!Number.isFinite(ms)) {
    throw new UsageError(
      `tollgate ${command}: --${name} must be an ISO date or date-time in UTC (2025-06-01, 2025-06-01T12:00) ` +
        `or a duration ago (30m, 24h, 7d, 2w), got ${JSON.stringify(value)}`,
    )
  }
  return ms
}

/** Whether the date part names a day of the calendar: Date.parse reads 2025-02-30 as March 2. */
function isCalendarDate(value: string): boolean {
  const [y, m, d] = value.slice(0, 10).split('-').map(Number) as [number, number, number]
  const day = new Date(Date.UTC(y, m - 1, d))
  return day.getUTCFullYear() === y && day.getUTCMonth() === m - 1 && day.getUTCDate() === d
}
