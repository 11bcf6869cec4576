import type { TollgateEvent } from '../events/types.js'
import type { StateWriter } from '../store/state-writer.js'

/**
 * A projection folds events into records of the state store. `apply` runs inside the projector's
 * write transaction, must be deterministic (replay must rebuild the same bytes: no clock, no
 * randomness, only the event and the store) and must handle every event type explicitly.
 */
export interface Projection {
  readonly name: string
  apply(event: TollgateEvent, writer: StateWriter): void
}

/**
 * The `default` of an exhaustive switch over TollgateEvent['type']: a new event type added to the
 * catalog fails to compile here until each projection says what it does with it.
 */
export function unhandledEvent(event: never): never {
  throw new Error(`projection has no case for event ${JSON.stringify(event)}`)
}
