/**
 * A call's params as JSON text, as sent upstream and as part of the keys that make two calls the
 * same (in-flight sharing, the cache, a batch's duplicates). No params and `[]` (the params of
 * eth_blockNumber, eth_chainId, eth_gasPrice…: the most common of all) are written without
 * JSON.stringify, which a batch of 50 calls paid up to four times per call.
 */
export function paramsJson(params: unknown): string {
  if (params === undefined || (Array.isArray(params) && params.length === 0)) return '[]'
  return JSON.stringify(params)
}
