import type { Clock } from '../../actors/runtime/clock.js'
import type { NodeKind } from '../core/node-kind.js'
import { MethodsLacking } from './methods-lacking.js'
import type { UpstreamNode } from './node.js'
import type { PoolView } from './pool-view.js'

/**
 * What a pool learns from its nodes' "method not found" (a node's own code: saysMethodMissing):
 * a method set aside on the nodes that lack it once another node served it, and remembered as
 * served by no node when every node of a kind said so in one call. Only methods of the table are
 * remembered (MethodsLacking).
 */
export class MethodLearning {
  /** Methods every node of a kind said it lacks, in one call: answered -32601 without a node, for the set-aside time. */
  readonly #servedByNone: Record<NodeKind, MethodsLacking>

  constructor(
    private readonly pool: PoolView,
    clock: Clock,
  ) {
    this.#servedByNone = { full: new MethodsLacking(undefined, clock), archive: new MethodsLacking(undefined, clock) }
  }

  /** Whether no node of the kind serves `method` (as they said within the set-aside time). */
  servedByNone(kind: NodeKind, method: string): boolean {
    return this.#servedByNone[kind].has(method)
  }

  /**
   * Another node of the kind served `method` in the call in which `lacking` said they lack it: it
   * is set aside on them (their calls for it go to the others, see MethodsLacking). Only then: a
   * node's "not found" alone sets nothing aside, so no answer makes every node look lacking and
   * send the calls to a node behind the head.
   */
  served(method: string, lacking: readonly UpstreamNode[]): void {
    for (const node of lacking) node.lacking.lacks(method)
  }

  /**
   * Every node of the kind said in one call that it lacks `method`: for the set-aside time its
   * calls get -32601 without asking a node. Without this, each call of a method no node serves
   * asked every node of the kind in turn (a tenant's loop of such calls, times the nodes); with it,
   * none. Only a node's own "method not found" code counts (saysMethodMissing), which no tenant's
   * params or contract can produce, and only methods of the table are remembered.
   */
  noneServes(kind: NodeKind, method: string, lacking: readonly UpstreamNode[]): void {
    const nodes = this.pool.nodesOf(kind)
    if (nodes.length === 0 || !nodes.every((n) => lacking.includes(n))) return
    this.#servedByNone[kind].lacks(method, nodes[0].lacking.setAsideMs)
  }

  /** The nodes changed (a reload): new nodes may serve what the old ones lacked. */
  forget(): void {
    this.#servedByNone.full.clear()
    this.#servedByNone.archive.clear()
  }
}
