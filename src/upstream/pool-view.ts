import type { NodeKind } from '../core/node-kind.js'
import type { UpstreamNode } from './node.js'
import type { NodeChooser } from './node-choice.js'

/**
 * What the parts of a pool's call (consensus, hedging, method learning) read of the pool: its
 * network, its nodes and chooser by kind, and why none of a kind takes calls. The parts hold no
 * nodes of their own: a reload replaces the pool's, and they see the new ones at their next call.
 */
export interface PoolView {
  readonly network: string
  nodesOf(kind: NodeKind): readonly UpstreamNode[]
  chooserOf(kind: NodeKind): NodeChooser
  /** Each node of the kind and why it takes no call, for a 503's message. */
  whyNone(kind: NodeKind): string
}
