import type { Logger } from 'pino'
import type { Clock } from '../../actors/runtime/clock.js'
import type { Config } from '../config/types.js'
import { Fleet, type FleetKeys } from './fleet.js'
import { FleetBus, fleetSubjectRoot, type FleetChannel } from './fleet-bus.js'
import { VERSION } from './package-version.js'

/** This instance in a fleet: its bus at once, its membership once the front end listens. */
export interface JoinedFleet {
  /** The bus to the other instances; closed after the fleet stopped. */
  readonly bus: FleetChannel
  /** This instance's part of `max` for an account (`max` itself until the fleet started). */
  allowance: Fleet['allowance']
  /** The fleet, once started. */
  fleet(): Fleet | undefined
  /**
   * Announce this instance at `address` (or config.publicUrl) and share the limits from now on:
   * only once the front end listens, so that no instance counts on one that cannot serve yet.
   */
  start(address: string): Fleet
}

export interface JoinFleetOptions {
  config: Pick<Config, 'events' | 'fleet' | 'publicUrl'>
  keys: FleetKeys
  /** This instance's id in the fleet. */
  instance: string
  clock: Clock
  logger: Logger
  /** The workers' channel through their supervisor, when there is no NATS. */
  channel?: FleetChannel
}

/**
 * Join the fleet: the other instances of the same event stream (over NATS) or the other workers
 * of one supervisor (over `channel`) share each key's limits. The bus is opened at once; it never
 * gives up while NATS is away, which the fleet counts as being cut off.
 */
export function joinFleet({ config, keys, instance, clock, logger, channel }: JoinFleetOptions): JoinedFleet {
  let fleet: Fleet | undefined
  const bus =
    channel ??
    FleetBus.open(config.events.nats!, fleetSubjectRoot(config), (connected) => {
      if (!connected) logger.warn("cut off from the fleet: each key gets this instance's share of its limits until NATS is back")
      fleet?.connectionChanged(connected)
    })
  return {
    bus,
    allowance: (accountId, max) => fleet?.allowance(accountId, max) ?? max,
    fleet: () => fleet,
    start: (address) => {
      fleet = new Fleet({
        bus,
        keys,
        self: { id: instance, address: config.publicUrl ?? address, startedAt: Date.now(), version: VERSION },
        clock,
        ...config.fleet,
        onMembership: (event, id, live) =>
          logger.info({ instance: id, live }, event === 'joined' ? 'an instance joined the fleet' : 'an instance left the fleet (it said so, or fell silent)'),
        onShare: (share) =>
          logger.warn({ share }, share < 1 ? "cut off from the fleet: applying this share of each key's limits" : 'back in the fleet: whole limits, shared'),
      })
      fleet.start()
      return fleet
    },
  }
}
