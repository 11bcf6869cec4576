/**
 * A call's params as JSON text, as sent upstream and as part of the keys that make two calls the
 * same (in-flight sharing, the cache, a batch's duplicates). No params and `[]` (the params of
 * eth_blockNumber, eth_chainId, eth_gasPrice…: the most common of all) are written without
 * JSON.stringify, which a batch of 50 calls paid up to four times per call.
 *
 * The text of the last params written is kept: a call's params are written for its in-flight key
 * and again for its upstream message in the same turn (0.3 µs each for an eth_getBalance). Params
 * are never changed once parsed (a call that needs other params, a split eth_getLogs, makes new ones).
 */
export function paramsJson(params: unknown): string {
  if (params === undefined || (Array.isArray(params) && params.length === 0)) return '[]'
  if (params === lastParams) return lastJson
  const json = JSON.stringify(params)
  lastParams = params
  lastJson = json
  return json
}

let lastParams: unknown
let lastJson = '[]'

/**
 * The params as the client wrote them (RpcCall.paramsJson), remembered as the text of `params`: the
 * in-flight key, the cache key and the upstream message of the call, written in the same turn,
 * then use it instead of JSON.stringify (2% of a distinct call's CPU). The text parses to the same
 * params (test/rpc/common-layout.test.ts), and a call written later simply writes its own.
 */
export function rememberParamsJson(params: unknown, text: string): string {
  if (params === undefined || (Array.isArray(params) && params.length === 0)) return '[]'
  lastParams = params
  lastJson = text
  return text
}
