import type { StateStore } from '../store/state-store.js'
import type { StateWriter } from '../store/state-writer.js'
import { UsageNotInStore } from './errors.js'

/**
 * meta: set (to 1) in the first transaction of a projector that skips usage (`usage.project`
 * false). A store that skipped usage events has usage tables that lack them, and its usage
 * partitions' checkpoints never moved: projecting usage on it again would show a history with
 * holes as if it were whole. So it is refused until `tollgate replay` rebuilds it.
 */
export const USAGE_NOT_PROJECTED = 'usage.notProjected'

/** Whether the store's projector has ever skipped usage. */
export function usageSkipped(store: StateStore): boolean {
  return store.table('meta').get(USAGE_NOT_PROJECTED) !== undefined
}

/** Mark, inside a write transaction, that this store skips usage from now on. */
export function markUsageSkipped(writer: StateWriter): void {
  if (writer.metaValue(USAGE_NOT_PROJECTED) === undefined) writer.setMetaValue(USAGE_NOT_PROJECTED, 1)
}

/** A projector that projects usage may not open a store that skipped it (see USAGE_NOT_PROJECTED). */
export function checkUsageMode(store: StateStore, projectsUsage: boolean): void {
  if (projectsUsage && usageSkipped(store)) {
    throw new UsageNotInStore(
      `the state store at ${store.path} was built by an instance that did not project usage (usage.project false), so its usage tables lack events: ` +
        'to project usage here, rebuild it with `tollgate replay --config FILE` (with usage.project true), or set usage.project back to false',
    )
  }
}
