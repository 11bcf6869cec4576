import type { NodeKind } from '../core/node-kind.js'
import { errorResponseJson } from '../errors/registry.js'
import { isInvalid, type RpcCall, type RpcEntry } from '../rpc/parse.js'
import type { GatewayCall } from './gateway-call.js'

/** A call refused before forwarding: its answer, and whether it was malformed or unsupported. */
export interface Refused {
  readonly refused: true
  readonly status: number
  readonly body: string
  readonly invalid: boolean
}

/** A call of the batch identical to an earlier one: answered with that one's answer and its own id. */
export interface Copy {
  readonly of: GatewayCall
  readonly index: number
  readonly idJson: string | undefined
}

/** What a client batch comes to before anything goes upstream. */
export interface BatchPlan {
  /** Each entry's answer text where already known (invalid or refused calls); undefined: to come, or a notification. */
  readonly parts: Array<string | undefined>
  /** The calls to forward, each once. */
  readonly routed: GatewayCall[]
  readonly copies: Copy[]
  /** Calls answered with a protocol error already (the WebSocket penalty counts them). */
  readonly invalid: number
}

/**
 * Route a batch's entries and merge its identical reads (same method and params; not local
 * calls, filter calls or transactions): those are routed, looked up and sent once; every copy
 * still counts (rate, usage) and is answered with its own id. Clients batch what their parts ask,
 * and parts ask alike (eth_chainId, eth_blockNumber, the same balance): a copy costs an id
 * splice, not a call's work.
 * @param route routes one call (the batch has one route context, so identical calls route alike)
 */
export function planBatch(entries: readonly RpcEntry[], route: (call: RpcCall, index: number) => GatewayCall | Refused): BatchPlan {
  let invalid = 0
  const parts = new Array<string | undefined>(entries.length)
  const routed: GatewayCall[] = []
  const copies: Copy[] = []
  let firsts: Firsts | undefined
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]
    if (isInvalid(entry)) {
      parts[i] = errorResponseJson(entry.idJson, entry.rpc, entry.message)
      invalid++
      continue
    }
    const r = route(entry, i)
    if ('refused' in r) {
      parts[i] = entry.idJson === undefined ? undefined : r.body
      if (r.invalid) invalid++
      continue
    }
    if (!r.local && r.spec.filter === undefined && r.spec.path !== 'send') {
      firsts ??= new Firsts()
      const first = firsts.of(r)
      if (first !== undefined) {
        copies.push({ of: first, index: i, idJson: entry.idJson })
        continue
      }
    }
    routed.push(r)
  }
  return { parts, routed, copies, invalid }
}

/**
 * The first call of a batch of each method and params. Looked up by the params' JSON alone, the
 * method compared after: a key of method and params written per call (a string built, then read
 * whole to hash it) was most of this step for 50 calls of one method; calls of another method with
 * the same params are looked up by both.
 */
class Firsts {
  readonly #byParams = new Map<string, GatewayCall>()
  #byMethodAndParams: Map<string, GatewayCall> | undefined

  /** The first call alike to `r` (undefined: `r` is the first, and is kept as such). */
  of(r: GatewayCall): GatewayCall | undefined {
    const first = this.#byParams.get(r.paramsJson)
    if (first === undefined) {
      this.#byParams.set(r.paramsJson, r)
      return undefined
    }
    if (first.method === r.method) return first
    const key = `${r.method}\0${r.paramsJson}`
    const other = (this.#byMethodAndParams ??= new Map()).get(key)
    if (other === undefined) this.#byMethodAndParams.set(key, r)
    return other
  }
}

/**
 * Which routed calls go to a node as ONE upstream batch per node kind (one frame or request, not
 * one per call: the profile's largest cost), and which go call by call: local calls, filter
 * calls (pinned to the node that holds the filter), what the upstream caller treats specially
 * (cache, getLogs splitting, heavy time-outs, transactions: `sentAsIs` false), and a kind's only
 * call (no batch around one call).
 */
export function groupForUpstream(
  routed: readonly GatewayCall[],
  sentAsIs: (c: GatewayCall) => boolean,
): { groups: Record<NodeKind, GatewayCall[]>; alone: GatewayCall[] } {
  const alone: GatewayCall[] = []
  const groups: Record<NodeKind, GatewayCall[]> = { full: [], archive: [] }
  for (const r of routed) {
    if (!r.local && r.spec.filter === undefined && sentAsIs(r)) groups[r.kind].push(r)
    else alone.push(r)
  }
  for (const kind of ['full', 'archive'] as const) {
    if (groups[kind].length === 1) alone.push(groups[kind].pop()!)
  }
  return { groups, alone }
}
