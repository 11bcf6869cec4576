import type { EventType, TollgateEvent } from '../events/types.js'
import type { StateWriter } from './state-writer.js'

/**
 * A projection folds events into records of the state store. It names the event types it handles
 * (`handles`), and the projector gives it only those. `apply` runs inside the projector's write
 * transaction and must be deterministic (replay must rebuild the same bytes: no clock, no
 * randomness, only the event and the store).
 */
export interface Projection {
  readonly name: string
  readonly handles: ReadonlySet<EventType>
  apply(event: TollgateEvent, writer: StateWriter): void
}
