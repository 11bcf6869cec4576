import { join } from 'node:path'
import type { Logger } from 'pino'
import { FinalityTracker } from '../cache/finality.js'
import { ImmutableCache } from '../cache/immutable-cache.js'
import type { Config } from '../config/types.js'
import type { HeadTracker } from '../gateway/head-tracker.js'
import type { Upstreams } from '../upstream/upstreams.js'
import type { Closers } from './closers.js'

/**
 * Open the cache of final answers and the finality it keeps to (config.cache.enabled), each
 * registered with `closers`; both undefined when the cache is off. A reorg at or below the
 * finalized block drops the network's cached answers. `live()` is the config in force, for the
 * finality depth a reload may change.
 */
export async function openAnswerCache(
  upstreams: Upstreams,
  heads: HeadTracker,
  config: Pick<Config, 'cache' | 'dataDir' | 'limits'>,
  live: () => Pick<Config, 'networks'>,
  logger: Logger,
  closers: Closers,
): Promise<{ cache?: ImmutableCache; finality?: FinalityTracker }> {
  if (!config.cache.enabled) return {}
  const cache = closers.add('cache', ImmutableCache.open(config.cache.path ?? join(config.dataDir, 'cache'), { maxBytes: config.cache.maxBytes }), (c) =>
    c.close(),
  )
  const finality = closers.add(
    'finality',
    new FinalityTracker(upstreams, {
      intervalMs: config.cache.finalityPollMs,
      timeoutMs: Math.min(config.limits.upstreamTimeoutMs, 5_000),
      depthFor: (network) => live().networks[network]?.finalityDepth ?? config.cache.finalityDepth,
      headOf: (network) => heads.head(network),
      onReorg: async (network, block) => {
        logger.warn({ network, block }, 'a block at or below the finalized one changed (reorg): the cached answers of the network are dropped')
        await cache.invalidate(network)
      },
      onModeChosen: (network, mode) =>
        logger.info(
          { network, mode },
          mode === 'tag' ? "finality: the nodes' finalized block" : 'finality: head minus finalityDepth (the nodes have no finalized tag)',
        ),
      onError: (network, err) => logger.debug({ network, err: String(err) }, 'finality poll failed'),
    }),
    (f) => f.stop(),
  )
  await finality.start()
  return { cache, finality }
}
