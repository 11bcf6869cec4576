import { randomBytes } from 'node:crypto'
import { readResponseHead } from '../upstream/json-rpc-wire.js'

/** A subscription id in the form nodes use (0x and 32 hex digits), unguessable. */
export function newSubscriptionId(): string {
  return `0x${randomBytes(16).toString('hex')}`
}

/** The node's subscription id from its answer to eth_subscribe; undefined when it is an error. */
export function subscriptionIdOf(text: string): string | undefined {
  try {
    if (readResponseHead(text).isError) return undefined
    const result = (JSON.parse(text) as { result?: unknown }).result
    return typeof result === 'string' ? result : undefined
  } catch {
    return undefined
  }
}

const SUBSCRIPTION_MEMBER = '"subscription":"'

/**
 * Where the subscription id lies in a notification text. Nodes write `"params":{"subscription":
 * "0x…","result":…}`; nothing inside a result (hex strings and numbers) can hold that member, so
 * its first occurrence is the one. Undefined for anything else (not a notification).
 * @example
 * const span = subscriptionIdSpan(text)!
 * text.slice(0, span.start) + clientId + text.slice(span.end) // the client's copy
 */
export function subscriptionIdSpan(text: string): { start: number; end: number } | undefined {
  const at = text.indexOf(SUBSCRIPTION_MEMBER)
  if (at < 0) return undefined
  const start = at + SUBSCRIPTION_MEMBER.length
  const end = text.indexOf('"', start)
  return end < 0 ? undefined : { start, end }
}
