/**
 * One registry of the gateway's own errors: a stable code, the HTTP status, the JSON-RPC code and
 * a message that says what happened and what to do. Every error the gateway answers comes from
 * here, and docs/errors.md's table is checked against it (test/docs/tables.test.ts).
 *
 * Why HTTP 200 for JSON-RPC protocol errors (-32700, -32600, -32601, -32602): Ethereum clients
 * (viem, ethers, web3.js) read the JSON-RPC error code only from a 2xx response; on any other
 * status they throw a generic HTTP error and the code is lost. Geth answers them with 200 too.
 * Gateway conditions (auth, limits, size, upstream health) get the HTTP status that names the
 * cause, so that proxies, retries and dashboards can see them.
 */
export interface ErrorSpec {
  readonly http: number
  readonly rpc: number
  readonly message: string
}

export const ERRORS = {
  PARSE_ERROR: { http: 200, rpc: -32700, message: 'Parse error: the body is not valid JSON' },
  INVALID_REQUEST: { http: 200, rpc: -32600, message: 'Invalid Request' },
  EMPTY_BATCH: { http: 200, rpc: -32600, message: 'Invalid Request: the batch is empty; send at least one call' },
  METHOD_NOT_FOUND: { http: 200, rpc: -32601, message: 'Method not found' },
  INVALID_PARAMS: { http: 200, rpc: -32602, message: 'Invalid params' },
  INTERNAL_ERROR: { http: 500, rpc: -32603, message: 'Internal error: the gateway failed to handle the call; retry, and report it if it persists' },
  MISSING_KEY: { http: 401, rpc: -32001, message: 'Missing API key: pass it as ?apikey=<API_KEY> or the header Authorization: Bearer <API_KEY>' },
  INVALID_KEY: {
    http: 401,
    rpc: -32001,
    message:
      'Invalid API key: it is not a key this gateway issued (check for a copy/paste error), or it was regenerated; get the current key from the dashboard',
  },
  CONFLICTING_KEYS: {
    http: 401,
    rpc: -32001,
    message: 'Conflicting keys: the request names more than one key (?apikey= and Authorization: Bearer differ); send one key, in one place, once',
  },
  PLAN_INACTIVE: { http: 403, rpc: -32003, message: "Forbidden: the account's plan is not active" },
  NODE_KIND_NOT_ALLOWED: { http: 403, rpc: -32003, message: "Forbidden: the account's plan does not include this network or node kind" },
  ORIGIN_NOT_ALLOWED: { http: 403, rpc: -32003, message: "Forbidden: this key is restricted to other domains; change the key's allowlist in the dashboard" },
  // A key's own restrictions (docs/keys.md): 403 as the origin's, with a code of their own so
  // that a client tells "this key may not do that" from "this key is not valid" (401, -32001).
  KEY_METHOD_NOT_ALLOWED: { http: 403, rpc: -32002, message: "Forbidden by the key's method rule: this key may not call this method" },
  KEY_CONTRACT_NOT_ALLOWED: {
    http: 403,
    rpc: -32002,
    message: "Forbidden by the key's contract rule: this call names no address, or an address the key does not allow",
  },
  // Signed tokens (docs/keys.md "Signed tokens"): 401 for a token that proves nothing, with the
  // code of a bad key (-32001) so that a client's "re-authenticate" path is the same; each reason
  // a code of its own so that the developer sees which check failed.
  TOKEN_MALFORMED: {
    http: 401,
    rpc: -32001,
    message: 'Invalid token: not a JWT (three base64url parts: header, claims, signature); send Authorization: Bearer <JWT> or an API key',
  },
  TOKEN_TOO_LARGE: { http: 401, rpc: -32001, message: 'Invalid token: larger than this gateway reads; keep the token under 8 KB (fewer or shorter claims)' },
  TOKEN_ALG_NOT_ALLOWED: {
    http: 401,
    rpc: -32001,
    message: "Invalid token: its algorithm is not the registered key's (none and HMAC are never accepted); sign with the key the kid names",
  },
  TOKEN_UNKNOWN_KID: { http: 401, rpc: -32001, message: "Invalid token: its kid names no public key of the key's account; register the key, or fix the kid" },
  TOKEN_BAD_SIGNATURE: {
    http: 401,
    rpc: -32001,
    message: 'Invalid token: the signature does not match the registered public key; sign with the private key of the kid named',
  },
  TOKEN_EXPIRED: { http: 401, rpc: -32001, message: 'Invalid token: expired (exp); get a new token from your token issuer' },
  TOKEN_NOT_YET_VALID: { http: 401, rpc: -32001, message: 'Invalid token: not valid yet (nbf); check the clock of your token issuer' },
  TOKEN_WRONG_AUDIENCE: {
    http: 401,
    rpc: -32001,
    message: "Invalid token: its aud is not this gateway's audience (keys.jwt.audience); issue it for this gateway",
  },
  TOKEN_CLAIMS_INVALID: {
    http: 401,
    rpc: -32001,
    message: 'Invalid token: a claim is missing or not as documented (sub: the key id, exp required, methods/contracts/origins lists); fix the token issuer',
  },
  TOKEN_REQUIRED: {
    http: 403,
    rpc: -32002,
    message: 'Forbidden: this key requires a signed token; send Authorization: Bearer <JWT> signed with a key registered on the account',
  },
  KEY_IP_NOT_ALLOWED: { http: 403, rpc: -32002, message: "Forbidden by the key's IP rule: this key may not be used from this address" },
  KEY_USER_AGENT_NOT_ALLOWED: { http: 403, rpc: -32002, message: "Forbidden by the key's user-agent rule: this key may not be used by this client" },
  ARCHIVE_REQUIRED: { http: 403, rpc: -32003, message: 'Forbidden: this call reads state older than full nodes keep, and the plan has no archive access' },
  IP_THROTTLED: {
    http: 429,
    rpc: -32005,
    message: 'Too many requests from this IP address: it kept exceeding rate limits and is throttled for a while; retry after the time in Retry-After',
  },
  LOGS_RANGE_TOO_WIDE: { http: 200, rpc: -32602, message: 'eth_getLogs block range too wide; ask for a narrower range' },
  LOGS_TOO_MANY: { http: 200, rpc: -32602, message: 'eth_getLogs query returned too many logs; ask for a narrower range' },
  // Refused when parsed: nodes written in Go read member names ignoring case, this gateway exactly.
  PARAMS_MEMBER_CASE: {
    http: 200,
    rpc: -32602,
    message: 'Invalid params: a member name differs only in case from one the node reads (TO beside to); write each member once, in its exact case',
  },
  CALL_DATA_AMBIGUOUS: {
    http: 200,
    rpc: -32602,
    message: 'Invalid params: a transaction object has both "data" and "input", and they differ; send the call data once, as "input"',
  },
  LOGS_BOUND_OBJECT: {
    http: 200,
    rpc: -32602,
    message:
      'Invalid params: a logs filter\'s fromBlock and toBlock take a block number or a tag; to read one block\'s logs by hash, write "blockHash" in the filter',
  },
  FILTER_NOT_FOUND: { http: 200, rpc: -32000, message: 'filter not found' },
  // 200, as FILTER_NOT_FOUND: waiting does not help (the client must uninstall one), and on a 429
  // viem and ethers retry the same call, and the answer carried the heavy calls' Retry-After.
  TOO_MANY_FILTERS: {
    http: 200,
    rpc: -32036,
    message: 'Too many filters: this key holds as many live filters as it may, all polled within the last minute; uninstall some (eth_uninstallFilter)',
  },
  RATE_LIMITED: {
    http: 429,
    rpc: -32005,
    message: 'Rate limit exceeded: too many requests for this key; retry after the time in Retry-After, with exponential backoff',
  },
  HEAVY_CALLS_BUSY: {
    http: 429,
    rpc: -32005,
    message: 'Too many heavy calls at once for this key: wait for some to finish, or send them one after another; retry after the time in Retry-After',
  },
  BODY_TOO_LARGE: { http: 413, rpc: -32010, message: 'Request body too large' },
  BATCH_TOO_LARGE: { http: 413, rpc: -32011, message: 'Batch too large' },
  UNKNOWN_NETWORK: { http: 404, rpc: -32012, message: 'Unknown network' },
  NOT_FOUND: { http: 404, rpc: -32013, message: 'Not found: JSON-RPC is served at POST /http/<network> and WS /ws/<network>' },
  METHOD_NOT_ALLOWED: { http: 405, rpc: -32014, message: 'HTTP method not allowed: send JSON-RPC with POST' },
  AMBIGUOUS_LENGTH: {
    http: 400,
    rpc: -32018,
    message: 'Bad request: more than one Content-Length header, so where the body ends is ambiguous; send one Content-Length (the connection is closed)',
  },
  METHOD_NOT_IMPLEMENTED: {
    http: 501,
    rpc: -32019,
    message: 'HTTP method not implemented: the gateway takes GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS and TRACE; send JSON-RPC with POST',
  },
  BODY_TIMEOUT: { http: 408, rpc: -32015, message: 'Request body not received in time: send the whole body right after the headers' },
  UPGRADE_REQUIRED: {
    http: 426,
    rpc: -32016,
    message:
      'Upgrade required: /ws/<network> speaks JSON-RPC over WebSocket; connect with a WebSocket client (wss://…/ws/<network>?apikey=<API_KEY>), or POST to /http/<network>',
  },
  ADMIN_UNAUTHORIZED: {
    http: 401,
    rpc: -32017,
    message: 'Unauthorized: /metrics on the admin listener needs the header Authorization: Bearer <TOLLGATE_ADMIN_TOKEN>',
  },
  NO_HEALTHY_UPSTREAM: { http: 503, rpc: -32020, message: 'No healthy node is available for this call right now; retry with backoff' },
  UPSTREAM_TIMEOUT: { http: 504, rpc: -32021, message: 'The node did not answer in time; retry, or split the call (for eth_getLogs, a narrower block range)' },
  UPSTREAM_ERROR: { http: 502, rpc: -32022, message: 'The node failed to answer; retry with backoff' },
  NODES_DISAGREE: {
    http: 502,
    rpc: -32024,
    message: 'The nodes disagree on this answer: no answer reached the agreement this network requires; retry (a node may be catching up)',
  },
  ANSWER_UNVERIFIED: {
    http: 502,
    rpc: -32026,
    message:
      "No node's answer passed this gateway's check against a header its nodes agree on (networks.<slug>.verify); retry (a node may be catching up), and report it if it persists",
  },
  VERIFY_RANGE_TOO_WIDE: {
    http: 400,
    rpc: -32027,
    message:
      'This eth_getLogs range is wider than this gateway proves in one call (networks.<slug>.verify); ask for a narrower block range, or a narrower filter',
  },
  VERIFY_PROOF_TOO_WIDE: {
    http: 400,
    rpc: -32028,
    message:
      'This eth_getProof names more storage slots than this gateway proves in one call (networks.<slug>.verify); ask for the slots in several calls of fewer each',
  },
  VERIFY_NODES_LACK: {
    http: 502,
    rpc: -32029,
    message:
      "This verified read needs of the network's nodes a method none of them serves (named in the message); ask the operator for nodes that serve it, or read from a network that does not verify",
  },
  // 200 as a node's own failed eth_call: the call was read, and a retry as it is fails the same way.
  VERIFY_CALL_TOO_LARGE: {
    http: 200,
    rpc: -32040,
    message:
      'This call reads more state than this gateway proves for one verified eth_call or eth_estimateGas (networks.<slug>.verify: calls); send a shorter access list, or split the work into smaller calls',
  },
  VERIFY_GAS_CAPPED: {
    http: 200,
    rpc: -32041,
    message:
      "This call needs more gas than this gateway's EVM runs a verified call with (the least of the call's gas, the block's gas limit and evm.gasCap); send less work in one call",
  },
  VERIFY_RUN_TIMEOUT: {
    http: 200,
    rpc: -32042,
    message: "This call ran longer in this gateway's EVM than one verified call may (evm.timeoutMs) and was stopped; send less work in one call, or less gas",
  },
  NODES_BUSY: {
    http: 503,
    rpc: -32025,
    message: 'The nodes for this call are at capacity: the call waited for a free slot and got none in time; retry after the time in Retry-After',
  },
  UPSTREAM_ANSWER_TOO_LARGE: {
    http: 502,
    rpc: -32023,
    message: "The node's answer is larger than this gateway passes on; ask for less (a narrower block range, fewer calls in a batch)",
  },
  WS_TOO_MANY_CONNECTIONS: {
    http: 429,
    rpc: -32030,
    message: 'Too many WebSocket connections open for this key; close one, or share one connection between your subscriptions',
  },
  WS_CONNECTION_COOLDOWN: {
    http: 429,
    rpc: -32031,
    message: 'New WebSocket connections of this key are blocked for a cooldown after too many in one second; retry after the time in Retry-After',
  },
  WS_PENALIZED: { http: 429, rpc: -32032, message: 'Messages of this key are refused for a while after repeated malformed or unsupported messages' },
  WS_TOO_MANY_SUBSCRIPTIONS: { http: 429, rpc: -32033, message: 'Too many subscriptions on this connection; unsubscribe some, or open another connection' },
  NO_WS_UPSTREAM: {
    http: 501,
    rpc: -32035,
    message:
      'Subscriptions are not served on this network: none of its nodes is configured with a WebSocket (networks.<slug>.upstreams[].ws); poll instead (eth_newBlockFilter, eth_getFilterChanges, eth_getLogs), or ask the operator to give a node its ws URL',
  },
  WS_TOO_MANY_LOGS_FILTERS: {
    http: 429,
    rpc: -32034,
    message: 'Too many distinct logs filters; subscribe to fewer (one filter takes several addresses and topics), or unsubscribe some',
  },
} as const satisfies Record<string, ErrorSpec>

export type ErrorCode = keyof typeof ERRORS

/** A gateway error on its way to a client: a registry code plus, optionally, a more precise message. */
export class GatewayError extends Error {
  override name = 'GatewayError'
  readonly code: ErrorCode
  readonly http: number
  readonly rpc: number
  /** Extra headers for the HTTP answer (Retry-After, RateLimit-*). */
  readonly headers?: Readonly<Record<string, string>>
  constructor(code: ErrorCode, detail?: string, options?: { cause?: unknown; headers?: Record<string, string> }) {
    const spec: ErrorSpec = ERRORS[code]
    super(detail ?? spec.message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.http = spec.http
    this.rpc = spec.rpc
    this.headers = options?.headers
  }
}

/** The JSON text of a JSON-RPC error response; `idJson` is the request id as JSON text. */
export function errorResponseJson(idJson: string, rpc: number, message: string, data?: unknown): string {
  const error = data === undefined ? { code: rpc, message } : { code: rpc, message, data }
  return `{"jsonrpc":"2.0","id":${idJson},"error":${JSON.stringify(error)}}`
}
