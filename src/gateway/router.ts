import type { NodeKind } from '../core/node-kind.js'
import { MESSAGES } from '../errors/messages.js'
import { isHexQuantity } from '../rpc/hex-quantity.js'
import type { MethodSpec } from '../rpc/method-table.js'

/** Which node kinds the key may use on the network, and which the network has healthy now. */
export interface RouteContext {
  readonly access: { readonly full: boolean; readonly archive: boolean }
  readonly healthy: { readonly full: boolean; readonly archive: boolean }
  /** Whether the network has archive nodes at all (healthy or not). */
  readonly hasArchive: boolean
  /** The network's head block as last seen; undefined until known (old state then goes to full nodes). */
  readonly head: number | undefined
  /** Blocks of state full nodes keep (state older than head − window is archive-only). */
  readonly windowBlocks: number
  /** Plan name, for messages. */
  readonly planName: string
}

export type Route =
  | { kind: NodeKind }
  /** The call cannot be served for this key: `code` says which registry error answers it. */
  | { refuse: 'METHOD_NOT_FOUND' | 'ARCHIVE_REQUIRED'; message: string }

/** The two routes, one object each: routing runs per call (fifty times for a batch of fifty). */
const TO_FULL: Route = Object.freeze({ kind: 'full' })
const TO_ARCHIVE: Route = Object.freeze({ kind: 'archive' })

/**
 * Route one call to a node kind: trace_* and state older than the full nodes' window go to
 * archive nodes (or get a clear refusal when the key has none); everything else goes to full
 * nodes, and to archive nodes when no full node is healthy or the key has only archive access.
 * Pure, so that every rule is tested without nodes.
 */
export function route(method: string, spec: MethodSpec, params: unknown, ctx: RouteContext): Route {
  return routeNamed(method, spec, spec.block === undefined ? NONE : blocksNamed(spec, params), ctx)
}

/**
 * route() of a call whose blocks were read already (blocksNamed): the dispatcher reads them once
 * per call, for the route and for the node's head that must reach the newest (PoolCall.minBlock).
 */
export function routeNamed(method: string, spec: MethodSpec, blocks: BlocksNamed, ctx: RouteContext): Route {
  if (spec.needs === 'archive') {
    if (ctx.access.archive && !ctx.hasArchive) {
      return { refuse: 'METHOD_NOT_FOUND', message: MESSAGES.NETWORK_HAS_NO_ARCHIVE.text({ method }) }
    }
    if (ctx.access.archive) return TO_ARCHIVE
    const ns = method.slice(0, method.indexOf('_'))
    return { refuse: 'METHOD_NOT_FOUND', message: MESSAGES.PLAN_HAS_NO_ARCHIVE_FOR.text({ namespace: ns, plan: ctx.planName }) }
  }
  const block = blocks[0]
  // A network without archive nodes: its full nodes are all there is (they may keep more than the window).
  if (block !== undefined && ctx.head !== undefined && ctx.head - block > ctx.windowBlocks && ctx.hasArchive) {
    if (ctx.access.archive) return TO_ARCHIVE
    return {
      refuse: 'ARCHIVE_REQUIRED',
      message: MESSAGES.STATE_OLDER_THAN_FULL_NODES_KEEP.text({ block, windowBlocks: ctx.windowBlocks, head: ctx.head, plan: ctx.planName }),
    }
  }
  if (ctx.access.full && (ctx.healthy.full || !ctx.access.archive || !ctx.healthy.archive)) return TO_FULL
  return TO_ARCHIVE
}

/**
 * The block numbers a call names, the oldest and the newest: a filter's fromBlock and toBlock, or
 * its one block parameter (both the same). Undefined for tags that mean "recent" (latest, pending,
 * safe, finalized), a block hash, or no block parameter (the node's default is latest).
 */
export type BlocksNamed = readonly [oldest: number | undefined, newest: number | undefined]

/** No block named: one array for every such call (routing runs per call of a batch). */
const NONE: BlocksNamed = Object.freeze([undefined, undefined] as const)

/** The oldest block a call reads, as a number (see BlocksNamed). */
export function oldestBlockOf(spec: MethodSpec, params: unknown): number | undefined {
  return blocksNamed(spec, params)[0]
}

/** The newest block a call names, as a number: the node that answers must have reached it (see BlocksNamed). */
export function newestBlockOf(spec: MethodSpec, params: unknown): number | undefined {
  return blocksNamed(spec, params)[1]
}

/** The blocks a call names (BlocksNamed), read once. */
export function blocksNamed(spec: MethodSpec, params: unknown): BlocksNamed {
  if (!spec.block || !Array.isArray(params)) return NONE
  if ('filter' in spec.block) {
    const filter = params[0] as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown } | undefined
    if (!filter || typeof filter !== 'object' || filter.blockHash !== undefined) return NONE
    const from = blockNumberOf(filter.fromBlock)
    const to = blockNumberOf(filter.toBlock)
    if (from === undefined) return to === undefined ? NONE : [to, to]
    if (to === undefined) return [from, from]
    return from <= to ? [from, to] : [to, from]
  }
  const n = blockNumberOf(params[spec.block.at])
  return n === undefined ? NONE : [n, n]
}

function blockNumberOf(param: unknown): number | undefined {
  if (typeof param === 'string') {
    if (param === 'earliest') return 0
    return isHexQuantity(param, 16) ? parseInt(param, 16) : undefined
  }
  if (typeof param === 'number' && Number.isInteger(param) && param >= 0) return param
  if (param && typeof param === 'object' && 'blockNumber' in param) return blockNumberOf((param as { blockNumber: unknown }).blockNumber)
  return undefined
}
