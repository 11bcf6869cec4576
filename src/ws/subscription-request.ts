import { MESSAGES } from '../errors/messages.js'
import type { SubscribeProblem } from '../errors/problem-words.js'

/**
 * What an `eth_subscribe` asks for, checked and put in a canonical form: two clients asking for
 * the same thing (newHeads and newBlockHeaders, or the same logs filter written differently)
 * get the same `key`, and so share one upstream subscription.
 */

export type SubscriptionKind = 'newHeads' | 'logs' | 'newPendingTransactions'

export interface SubscriptionRequest {
  kind: SubscriptionKind
  /** The params sent to the node. */
  upstreamParams: unknown[]
  /** Equal for requests that one upstream subscription can serve. */
  key: string
}

export type SubscribeCheck = { ok: true; request: SubscriptionRequest } | { ok: false; message: string }

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const TOPIC = /^0x[0-9a-fA-F]{64}$/

/**
 * Check eth_subscribe params. Errors are the client's (-32602): an unsupported kind, or a filter
 * the node would refuse anyway.
 * @example parseSubscribe(['newBlockHeaders']) // { ok: true, request: { kind: 'newHeads', upstreamParams: ['newHeads'], key: 'newHeads' } }
 */
export function parseSubscribe(params: unknown): SubscribeCheck {
  if (!Array.isArray(params) || typeof params[0] !== 'string') {
    return invalid({ problem: 'no-kind' })
  }
  const [name, ...rest] = params as [string, ...unknown[]]
  switch (name) {
    case 'newHeads':
    case 'newBlockHeaders':
      // newBlockHeaders is web3.js's name for the same thing; nodes only know newHeads.
      if (rest.length > 1 || (rest.length === 1 && !isPlainObject(rest[0]))) return invalid({ problem: 'new-heads-options' })
      return ok('newHeads', ['newHeads', ...rest], `newHeads${rest.length ? JSON.stringify(canonical(rest)) : ''}`)
    case 'newPendingTransactions':
      if (rest.length > 1 || (rest.length === 1 && typeof rest[0] !== 'boolean')) {
        return invalid({ problem: 'pending-options' })
      }
      return ok('newPendingTransactions', ['newPendingTransactions', ...rest], `newPendingTransactions${rest[0] === true ? ':full' : ''}`)
    case 'logs':
      return logs(rest)
    default:
      return invalid({ problem: 'unsupported-kind', kind: name })
  }
}

function logs(rest: unknown[]): SubscribeCheck {
  if (rest.length > 1) return invalid({ problem: 'logs-filters-many' })
  const filter = rest.length === 0 || rest[0] === null ? {} : rest[0]
  if (!isPlainObject(filter)) return invalid({ problem: 'logs-filter-not-object' })
  for (const name of Object.keys(filter)) {
    if (name === 'address' || name === 'topics') continue
    if ((name === 'fromBlock' || name === 'toBlock') && (filter[name] === 'latest' || filter[name] === undefined)) continue
    if (name === 'fromBlock' || name === 'toBlock' || name === 'blockHash') {
      return invalid({ problem: 'logs-past-blocks' })
    }
    return invalid({ problem: 'logs-field-unknown', field: name })
  }
  const address = addresses(filter.address)
  if (!Array.isArray(address)) return invalid(address)
  const topics = topicList(filter.topics)
  if (!Array.isArray(topics)) return invalid(topics)
  const upstream: Record<string, unknown> = {}
  if (address.length > 0) upstream.address = address.length === 1 ? address[0] : address
  if (topics.length > 0) upstream.topics = topics.map((p) => (p === null ? null : p.length === 1 ? p[0] : p))
  return ok('logs', ['logs', upstream], `logs${JSON.stringify({ address, topics })}`)
}

/** Lower-case, sorted, unique: an OR of addresses does not depend on order or case. */
function addresses(value: unknown): string[] | SubscribeProblem {
  if (value === undefined || value === null) return []
  const list = Array.isArray(value) ? value : [value]
  for (const a of list) if (typeof a !== 'string' || !ADDRESS.test(a)) return { problem: 'address-invalid', value: a }
  return unique(list as string[])
}

/** Each position null (any) or a sorted set of topics; trailing "any" positions dropped. */
function topicList(value: unknown): Array<string[] | null> | SubscribeProblem {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) return { problem: 'topics-not-array' }
  if (value.length > 4) return { problem: 'topics-too-many' }
  const out: Array<string[] | null> = []
  for (const position of value) {
    if (position === null || (Array.isArray(position) && position.length === 0)) {
      out.push(null)
      continue
    }
    const list = Array.isArray(position) ? position : [position]
    for (const topic of list) if (typeof topic !== 'string' || !TOPIC.test(topic)) return { problem: 'topic-invalid', value: topic }
    out.push(unique(list as string[]))
  }
  while (out.length > 0 && out[out.length - 1] === null) out.pop()
  return out
}

function unique(list: string[]): string[] {
  return [...new Set(list.map((s) => s.toLowerCase()))].sort()
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (isPlainObject(value))
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical(value[k])]),
    )
  return value
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function ok(kind: SubscriptionKind, upstreamParams: unknown[], key: string): SubscribeCheck {
  return { ok: true, request: { kind, upstreamParams, key } }
}

function invalid(problem: SubscribeProblem): SubscribeCheck {
  return { ok: false, message: MESSAGES.SUBSCRIBE_PARAMS.text(problem) }
}
