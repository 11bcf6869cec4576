import type { Logger } from 'pino'
import type { Config } from '../config/types.js'
import type { HeadTracker } from '../gateway/head-tracker.js'
import { NodeHeadMonitor } from '../upstream/node-heads.js'
import type { Upstreams } from '../upstream/upstreams.js'
import type { Closers } from './closers.js'

/**
 * Watch every node's head and chain, started and registered with `closers`: each network's best
 * head goes to `heads` (the router's archive choice), a node that falls behind or answers another
 * chain is taken out and logged, and logged again when it is back. `live()` is the config in force,
 * for the lag a reload may change.
 */
export async function watchNodeHeads(
  upstreams: Upstreams,
  heads: HeadTracker,
  config: Pick<Config, 'health' | 'limits'>,
  live: () => Pick<Config, 'health'>,
  logger: Logger,
  closers: Closers,
): Promise<NodeHeadMonitor> {
  const nodeHeads = closers.add(
    'node heads',
    new NodeHeadMonitor(upstreams, {
      intervalMs: config.health.pollMs,
      timeoutMs: Math.min(config.limits.upstreamTimeoutMs, 5_000),
      onBest: (network, best) => heads.observe(network, best),
      onChange: (network, node, behind, lag) =>
        logger.warn(
          { network, node, lag, maxLagBlocks: live().health.maxLagBlocks },
          behind ? 'node behind the best node of its network: taken out' : 'node caught up: back in',
        ),
      onChain: (network, node, wrong, chainId, expectedChainId) =>
        wrong
          ? logger.error(
              { network, node, chainId, expectedChainId },
              "node on another chain than its network: taken out until it answers the network's chain id; fix the node's URL or the network's chainId",
            )
          : logger.warn({ network, node, chainId }, "node back on its network's chain: back in"),
    }),
    (n) => n.stop(),
  )
  await nodeHeads.start()
  return nodeHeads
}
