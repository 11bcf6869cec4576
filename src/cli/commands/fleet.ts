import { unpack } from 'msgpackr'
import { parseCommandArgs, required } from '../args.js'
import { UsageError } from '../errors.js'
import { loadConfig } from '../../config/load.js'
import { FleetBus, fleetSubjectRoot } from '../../fleet/fleet-bus.js'
import type { Member } from '../../fleet/membership.js'

const USAGE_LINE = 'tollgate fleet --config FILE [--json]'

/**
 * `tollgate fleet --config FILE`: the live instances of the config's fleet (the gateways on its
 * NATS stream), as their heartbeats say: id, address, version, start time, the share of each
 * key's limit each applies, the accounts it owns (heard of in the last second) and the accounts hot
 * as it knows them ('-': an instance of a version without owners). Listens for two and a half heartbeat intervals (of the
 * longest interval one says it beats at, in a large fleet), then prints.
 */
export async function fleetCommand(args: string[]): Promise<void> {
  const v = parseCommandArgs('fleet', args, { config: { type: 'string' }, json: { type: 'boolean' } })
  const config = loadConfig(required('fleet', 'config', v.config))
  if (config.events.nats === undefined) {
    throw new UsageError(
      `tollgate fleet: the config has no events.nats, so its gateway is a fleet of one (instances share limits over NATS); use: ${USAGE_LINE}`,
    )
  }
  const heard = new Map<string, Member>()
  let connected = false
  const bus = FleetBus.open(config.events.nats, fleetSubjectRoot(config), (up) => (connected ||= up), 'tollgate-fleet-cli')
  bus.subscribe(bus.subjects.members, (data) => {
    const member = unpack(data) as Member
    if (member.leaving === true) heard.delete(member.id)
    else heard.set(member.id, member)
  })
  // Two and a half heartbeats, or of the longest interval an instance says it beats at (a large fleet's).
  const started = Date.now()
  const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
  await sleep(config.fleet.heartbeatMs * 2.5)
  const every = Math.max(config.fleet.heartbeatMs, ...[...heard.values()].map((m) => m.every ?? 0))
  await sleep(started + every * 2.5 - Date.now())
  await bus.close()
  if (!connected) throw new Error(`cannot reach NATS at ${String(config.events.nats)}: no instance can be listed`)
  const members = [...heard.values()].sort((a, b) => (a.id < b.id ? -1 : 1))
  if (v.json) {
    for (const m of members) process.stdout.write(JSON.stringify(m) + '\n')
    return
  }
  const rows = [
    ['INSTANCE', 'ADDRESS', 'VERSION', 'STARTED', 'SHARE', 'OWNED', 'HOT'],
    ...members.map((m) => [
      m.id,
      m.address,
      m.version,
      new Date(m.startedAt).toISOString(),
      m.share === 1 ? '1' : m.share.toFixed(3),
      m.owned === undefined ? '-' : String(m.owned),
      m.hot === undefined ? '-' : String(m.hot),
    ]),
  ]
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  for (const r of rows)
    process.stdout.write(
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd() + '\n',
    )
  process.stdout.write(`${members.length} instance${members.length === 1 ? '' : 's'} on stream ${config.events.stream}\n`)
}
