import type { Entitlement } from '../events/types.js'
import { UsageError } from './errors.js'

/** `eth-1:full,eth-1:archive` → entitlements. */
export function parseNodes(text: string): Entitlement[] {
  return text
    .split(',')
    .filter(Boolean)
    .map((pair) => {
      const [network, kind] = pair.trim().split(':')
      if (!network || (kind !== 'full' && kind !== 'archive')) {
        throw new UsageError(`--nodes: ${JSON.stringify(pair)} is not <network>:full or <network>:archive (e.g. eth-1:full,eth-1:archive)`)
      }
      return { network, kind }
    })
}
