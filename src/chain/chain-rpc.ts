import type { PoolCallOptions, UpstreamPool } from '../upstream/pool.js'
import { ChainRpcError, ChainUnavailableError } from './errors.js'

/** A JSON-RPC client of one network: the gateway's own upstream pool, never the user's wallet. */
export interface ChainRpc {
  readonly network: string
  /** The call's `result`; throws ChainRpcError (node said no) or ChainUnavailableError (no answer). */
  request<T = unknown>(method: string, params: unknown[]): Promise<T>
}

/**
 * A ChainRpc over an UpstreamPool: payments and contract-wallet signatures are checked through
 * the nodes the gateway trusts, so that a user (or a compromised browser) cannot feed it a fake
 * receipt. Full nodes first; archive nodes when the network has no full node.
 * @example
 * const rpc = poolRpc(upstreams.pool('eth-1')!, { timeoutMs: 10_000 })
 * const head = await rpc.request<string>('eth_blockNumber', [])
 */
export function poolRpc(pool: UpstreamPool, opts: Pick<PoolCallOptions, 'timeoutMs' | 'deadlineMs'>): ChainRpc {
  const kind = pool.hasKind('full') ? 'full' : 'archive'
  return {
    network: pool.network,
    async request<T>(method: string, params: unknown[]): Promise<T> {
      let body: string
      try {
        body = (await pool.call({ kind, method, params, idJson: '1', timeoutMs: opts.timeoutMs, deadlineMs: opts.deadlineMs })).text
      } catch (cause) {
        throw new ChainUnavailableError(`${pool.network}: no node answered ${method}`, { cause })
      }
      const answer = JSON.parse(body) as { result?: T; error?: { code?: number; message?: string; data?: unknown } }
      if (answer.error) throw new ChainRpcError(method, answer.error)
      return answer.result as T
    },
  }
}
