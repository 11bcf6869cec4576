import { UsageError } from './errors.js'
import { nameProcess } from '../main/process-title.js'

const USAGE = `Usage: tollgate <command>

  dev [--port 8080] [--admin-port 9090] [--data ./data/dev]   local devnet, embedded log, demo key, curl line
  dev --fleet [--port 8080] [--data ./data/dev-fleet]    3 NATS servers in a cluster, 3 gateways, nginx in front
  start --config FILE                        run the gateway (needs TOLLGATE_SECRET)
  reload --config FILE                       the running gateway of the config applies the file again
                                             (nodes, plans, limits, health, hedge; SIGHUP does the same)
  accounts create --config FILE --wallet 0xADDR --plan ID [--nodes eth-1:full,eth-1:archive]
  accounts nodes --config FILE --account ID --nodes eth-1:full,...   change the nodes of Tier 1 or 2
  keys regenerate --config FILE --account ID [--grace SECONDS]
  keys restrict --config FILE --account ID [--methods M,..] [--deny-methods M,..] [--contracts 0x..,..]
                [--ips IP|CIDR,..] [--user-agent TEXT].. [--clear]
                                             the key's method, contract, IP and user-agent rules (docs/keys.md)
  nodes attach --config FILE --account ID --network SLUG --url URL [--ws URL] [--kind full|archive]
  events --config FILE [--follow] [--from SEQ]
  replay --config FILE [--restart] [--batch N]
                                             rebuild the LMDB projections from the event log (resumes one interrupted)
  usage --config FILE [--account ID] [--key ID] [--since T] [--until T] [--by hour|day] [--json]
                                             usage per key; T: 2025-06-01, 2025-06-01T12:00 (UTC) or 24h, 7d ago
  fleet --config FILE [--json]               the live instances on the config's NATS stream and their share of each limit
`

/**
 * Each command's module, loaded when it runs: the gateway's (uWebSockets.js, viem, the dashboard)
 * took 0.8 s to load, which `tollgate replay` or `tollgate usage` paid for nothing.
 */
const COMMANDS: Record<string, () => Promise<(args: string[]) => Promise<void>>> = {
  dev: async () => (await import('./commands/dev.js')).devCommand,
  start: async () => (await import('./commands/start.js')).startCommand,
  reload: async () => (await import('./commands/reload.js')).reloadCommand,
  accounts: async () => (await import('./commands/accounts.js')).accountsCommand,
  keys: async () => (await import('./commands/keys.js')).keysCommand,
  events: async () => (await import('./commands/events.js')).eventsCommand,
  replay: async () => (await import('./commands/replay.js')).replayCommand,
  nodes: async () => (await import('./commands/nodes.js')).nodesCommand,
  usage: async () => (await import('./commands/usage.js')).usageCommand,
  fleet: async () => (await import('./commands/fleet.js')).fleetCommand,
}

/** Run the command line; exit code 2 for usage mistakes, 1 for failures. */
export async function main(argv: string[]): Promise<void> {
  const [name, ...args] = argv
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE)
    return
  }
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
  try {
    if (!load) throw new UsageError(`tollgate: unknown command ${JSON.stringify(name)}`)
    // How `tollgate reload` tells a gateway from any other pid a lock file could name.
    nameProcess(argv)
    await (await load())(args)
  } catch (err) {
    const e = err as Error
    process.stderr.write(`${e.name === 'Error' ? 'error' : e.name}: ${e.message}\n`)
    if (err instanceof UsageError) process.stderr.write('\n' + USAGE)
    process.exitCode = err instanceof UsageError ? 2 : 1
  }
}

// Run directly (node --import tsx src/cli/main.ts ...) as well as through bin/tollgate.js.
if (process.argv[1] && /cli[\\/]main\.(ts|js)$/.test(process.argv[1])) {
  void main(process.argv.slice(2))
}
