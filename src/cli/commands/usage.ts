import { parseCommandArgs, required } from '../args.js'
import { UsageError } from '../errors.js'
import { openContextFor } from '../context.js'
import { loadConfig } from '../../config/load.js'
import { parseTimeArg } from '../time-arg.js'
import { usageReport, type UsagePeriod, type UsageReportRow } from '../../usage/usage-report.js'
import { addRefusals, REFUSAL_RULES, type RefusalsByRule } from '../../store/records.js'

const COLUMNS = ['account', 'key', 'calls', 'units', 'errors', 'bytes in', 'bytes out'] as const
const REFUSED = 'refused by rule'

/**
 * `tollgate usage --config FILE [--account ID] [--key ID] [--since T] [--until T] [--by hour|day] [--json]`:
 * UsageRecorded sums per key (and per UTC hour or day with --by) from the usage projection, after
 * applying what the log holds now. A table, or with --json one object a line: keyId, accountId,
 * requests, units (compute units, docs/costs.md), errors, bytesIn, bytesOut (and period, an ISO time,
 * with --by), and `refused` (calls refused by the key's own rules, by rule) when its rules refused any.
 */
export async function usageCommand(args: string[]): Promise<void> {
  const v = parseCommandArgs('usage', args, {
    config: { type: 'string' },
    account: { type: 'string' },
    key: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    by: { type: 'string' },
    json: { type: 'boolean' },
  })
  const configPath = required('usage', 'config', v.config)
  if (v.by !== undefined && v.by !== 'hour' && v.by !== 'day') {
    throw new UsageError(`tollgate usage: --by must be hour or day, got ${JSON.stringify(v.by)}`)
  }
  const now = Date.now()
  const since = v.since === undefined ? undefined : parseTimeArg('usage', 'since', v.since, now)
  const until = v.until === undefined ? undefined : parseTimeArg('usage', 'until', v.until, now)
  if (since !== undefined && until !== undefined && until <= since) {
    throw new UsageError(`tollgate usage: --until (${new Date(until).toISOString()}) must be after --since (${new Date(since).toISOString()})`)
  }
  // Refused before the store is opened: catching it up would apply the whole log for nothing.
  const config = loadConfig(configPath)
  if (!config.usage.project) {
    throw new UsageError(
      `tollgate usage: ${configPath} has usage.project false, so its data folder holds no usage: run tollgate usage with the config of an instance that projects usage (usage.project true), or rebuild this one's with usage.project true and \`tollgate replay\``,
    )
  }
  const ctx = await openContextFor(config)
  try {
    const report = usageReport(ctx.store, { accountId: v.account, keyId: v.key, since, until, by: v.by as UsagePeriod | undefined })
    for (const note of report.notes) process.stderr.write(`note: ${note}\n`)
    process.stdout.write(v.json ? report.rows.map((row) => JSON.stringify(jsonLine(row)) + '\n').join('') : table(report.rows, v.by !== undefined))
  } finally {
    await ctx.close()
  }
}

/** The fields of a --json line, in a fixed order. */
function jsonLine(row: UsageReportRow) {
  return {
    keyId: row.keyId,
    accountId: row.accountId,
    ...(row.period === undefined ? {} : { period: new Date(row.period).toISOString() }),
    requests: row.requests,
    units: row.units,
    errors: row.errors,
    bytesIn: row.bytesIn,
    bytesOut: row.bytesOut,
    ...(row.refused === undefined ? {} : { refused: row.refused }),
  }
}

/** `method 12, contract 3`: refusals by rule, in REFUSAL_RULES order ('' when none). */
export function refusalsText(refused: RefusalsByRule | undefined): string {
  return REFUSAL_RULES.filter((rule) => (refused?.[rule] ?? 0) > 0)
    .map((rule) => `${rule} ${refused![rule]}`)
    .join(', ')
}

/**
 * Columns padded to their widest cell, numbers right-aligned, a total line when there are several
 * rows; a last column of refusals by rule when the rules of a key shown refused calls.
 */
function table(rows: readonly UsageReportRow[], byPeriod: boolean): string {
  const refusals = rows.some((r) => r.refused !== undefined)
  const header = [...(byPeriod ? ['period'] : []), ...COLUMNS, ...(refusals ? [REFUSED] : [])]
  const cells = rows.map((r) => [
    ...(byPeriod ? [new Date(r.period ?? 0).toISOString().slice(0, 16) + 'Z'] : []),
    r.accountId,
    r.keyId,
    String(r.requests),
    String(r.units),
    String(r.errors),
    String(r.bytesIn),
    String(r.bytesOut),
    ...(refusals ? [refusalsText(r.refused)] : []),
  ])
  if (rows.length === 0) return header.join('  ') + '\n(no usage)\n'
  if (rows.length > 1) {
    const sum = (f: 'requests' | 'units' | 'errors' | 'bytesIn' | 'bytesOut') => String(rows.reduce((n, r) => n + r[f], 0))
    const refused = rows.reduce<RefusalsByRule | undefined>((sum, r) => addRefusals(sum, r.refused), undefined)
    cells.push([
      ...(byPeriod ? ['total'] : []),
      byPeriod ? '' : 'total',
      '',
      sum('requests'),
      sum('units'),
      sum('errors'),
      sum('bytesIn'),
      sum('bytesOut'),
      ...(refusals ? [refusalsText(refused)] : []),
    ])
  }
  // The five figures; the refusals after them are text.
  const numeric = (byPeriod ? 1 : 0) + 2
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  const line = (c: readonly string[]) =>
    c
      .map((cell, i) => (i >= numeric && i < numeric + 5 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd()
  return [line(header), ...cells.map(line)].join('\n') + '\n'
}
