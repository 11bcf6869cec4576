import { ERRORS, type ErrorCode } from '../src/errors/registry.js'
import { MAX_ID_LENGTH, MAX_PARAMS_DEPTH } from '../src/rpc/parse.js'

/** When each error is answered: docs/errors.md's table is this, rendered (and a test checks it is). */
const WHEN: Record<ErrorCode, string> = {
  PARSE_ERROR: 'the body is not valid JSON',
  INVALID_REQUEST: `a request object is not JSON-RPC 2.0 (no \`"jsonrpc":"2.0"\`, no method, bad id or params), its id is longer than ${MAX_ID_LENGTH} characters or its params nest deeper than ${MAX_PARAMS_DEPTH} levels, or its bytes are not UTF-8`,
  EMPTY_BATCH: 'the batch is `[]`',
  METHOD_NOT_FOUND: 'the method does not exist, is not served, or needs a node kind the plan lacks',
  INVALID_PARAMS: 'the parameters are wrong (the node says so; passed through as it says)',
  INTERNAL_ERROR: 'a fault in the gateway',
  MISSING_KEY: 'no `?apikey=` and no `Authorization: Bearer`',
  INVALID_KEY: 'the key is malformed, unknown, regenerated or revoked',
  CONFLICTING_KEYS:
    'the request names more than one key: `?apikey=` and `Authorization: Bearer` differ, two `?apikey=` differ, or two `Authorization` headers differ (the same key twice is served)',
  PLAN_INACTIVE: 'the account has no plan, or its period ended',
  NODE_KIND_NOT_ALLOWED: 'the plan does not include this network or node kind',
  ORIGIN_NOT_ALLOWED: "the key has a domain allowlist and the request's `Origin` (else `Referer`) is not on it, or has neither",
  ARCHIVE_REQUIRED: 'the call reads state older than the full nodes keep (`routing.fullNodeWindowBlocks`) and the plan has no archive access',
  KEY_METHOD_NOT_ALLOWED:
    "the key's method rule refuses the call's method: not among the methods it allows, or among those it denies (each call of a batch on its own; docs/keys.md)",
  KEY_CONTRACT_NOT_ALLOWED:
    'the key has a contract rule and the call names no address where its method names one, or one not listed (eth_getLogs without `address`, a contract creation; docs/keys.md has the table)',
  TOKEN_MALFORMED: 'the `Authorization: Bearer` credential has dots (a token, not a key) but is not three base64url parts of JSON header and claims',
  TOKEN_TOO_LARGE: 'the token is over 8 KB (refused before it is decoded)',
  TOKEN_ALG_NOT_ALLOWED: "the token's `alg` is `none`, an HMAC, or another algorithm than the one its `kid` was registered with",
  TOKEN_UNKNOWN_KID: "the token's `kid` names no public key registered on the account of its key (`sub`), or it has none",
  TOKEN_BAD_SIGNATURE: "the token's signature does not verify with the public key its `kid` names",
  TOKEN_EXPIRED: "the token's `exp` is past, beyond `keys.jwt.clockSkewSeconds` (over WebSocket: the connection closes with 1008)",
  TOKEN_NOT_YET_VALID: "the token's `nbf` is ahead, beyond `keys.jwt.clockSkewSeconds`",
  TOKEN_WRONG_AUDIENCE: "the token's `aud` does not name `keys.jwt.audience`",
  TOKEN_CLAIMS_INVALID:
    'the token has no `sub` naming a key id or no `exp`, or a `methods`, `contracts` or `origins` claim that is not a list of valid entries within its bound, or a claim the gateway reads named in another case (`Contracts`: ignored, it would narrow nothing)',
  TOKEN_REQUIRED: 'the key requires a signed token and the request carries the API key alone',
  KEY_IP_NOT_ALLOWED: 'the key has an IP rule and the client IP (as `trustProxy` decides) is not in it',
  KEY_USER_AGENT_NOT_ALLOWED: "the key has a user-agent rule and the request's `User-Agent` contains none of its entries",
  IP_THROTTLED: 'the client IP kept exceeding rate limits (see IP throttling); lifted by itself',
  LOGS_RANGE_TOO_WIDE:
    'an `eth_getLogs` range wider than `heavy.getLogs.maxRangeBlocks`; the message names a range that works (`Try with this block range [0x…, 0x…].`)',
  LOGS_TOO_MANY: 'an `eth_getLogs` result over `heavy.getLogs.maxLogs` logs; the message names a range that works',
  PARAMS_MEMBER_CASE:
    'a transaction object, logs filter, access list entry or EIP-1898 block object has a member whose name equals one the node reads ignoring case without being it (`TO`, `Address`, `FromBlock`): nodes written in Go read it, the gateway reads names exactly; refused when parsed, before any node is asked (the message names the member and what to write)',
  CALL_DATA_AMBIGUOUS:
    'a transaction object has both `data` and `input` and they differ: geth refuses it, reth and anvil run `input`, and a verified call would run another call than the node; refused when parsed',
  LOGS_BOUND_OBJECT:
    'a logs filter\'s `fromBlock` or `toBlock` is an object (`{"blockHash":…}`, `{"blockNumber":…}`), in `eth_getLogs`, `eth_newFilter` or a `logs` subscription; one block\'s logs by hash are asked with the filter\'s own `blockHash`',
  FILTER_NOT_FOUND: 'eth_getFilterChanges & co. for a filter this key did not create here, or one idle over 5 minutes (as geth says it)',
  TOO_MANY_FILTERS:
    'an `eth_newFilter`, `eth_newBlockFilter` or `eth_newPendingTransactionFilter` past `limits.maxFiltersPerKey` live filters of the key on the network (or `limits.maxFiltersPerAccount` of its account) when every one of them was polled within the last minute (an idle one is uninstalled to make room instead), or past the 100,000 filters one instance holds',
  RATE_LIMITED: "over the key's requests per second, or its plan's compute units per second (with `Retry-After`, `RateLimit-*`)",
  HEAVY_CALLS_BUSY:
    'a heavy call (traces, `debug_trace*`, `eth_getLogs`…) while the key already has `heavy.atOnce` (or its plan’s `heavyCallsAtOnce`) of them at the nodes, none finishing within `heavy.atOnceWaitMs` (with `Retry-After`)',
  BODY_TOO_LARGE: 'the body is over `limits.maxBodyBytes`',
  BATCH_TOO_LARGE: 'the batch has more than `limits.maxBatch` calls',
  UNKNOWN_NETWORK: 'the network slug is not in the config',
  NOT_FOUND: 'no such path',
  METHOD_NOT_ALLOWED: 'a path with an HTTP method it does not take (the answer has `Allow`)',
  AMBIGUOUS_LENGTH: 'two or more `Content-Length` headers, equal or not (a proxy in front may read the other one: request smuggling); the connection is closed',
  METHOD_NOT_IMPLEMENTED:
    'an HTTP method uWebSockets.js does not know (`FOO`, `PROPFIND`), answered by the nginx config of docs/fleet.md and docs/operations.md; the gateway alone closes such a connection unanswered (uWebSockets.js, see SECURITY.md)',
  BODY_TIMEOUT: 'the body did not arrive within `limits.bodyTimeoutMs` of the headers (the connection is closed)',
  UPGRADE_REQUIRED: 'a GET of `/ws/<network>` that is not a WebSocket upgrade',
  ADMIN_UNAUTHORIZED: '`/metrics` on the admin listener without the bearer token `TOLLGATE_ADMIN_TOKEN` (when one is set)',
  NO_HEALTHY_UPSTREAM: 'no node of the needed kind is up (all failing, or behind the best node by more than `health.maxLagBlocks`)',
  UPSTREAM_TIMEOUT: 'the node did not answer within `limits.upstreamTimeoutMs` (heavy calls: `heavy.timeoutMs`)',
  UPSTREAM_ERROR: 'the node failed: connection refused, reset or closed mid-answer; an empty, non-JSON or truncated answer (the message says which)',
  NODES_DISAGREE:
    'consensus is on for the network (`networks.<slug>.consensus`) and the nodes asked gave different answers, none reaching `agreement` (docs/upstream-selection.md)',
  ANSWER_UNVERIFIED:
    "`verify: reads` is on for the network and no node's answer passed its check against a header the nodes agree on (a proof, a code hash), or too few nodes agreed on the header (docs/verified-answers.md)",
  VERIFY_RANGE_TOO_WIDE:
    '`verify: reads` is on for the network and an eth_getLogs range (or a part of a split range) has more blocks than it proves in one call (2,000), or more blocks whose bloom may match the filter (100) (docs/verified-answers.md)',
  VERIFY_PROOF_TOO_WIDE:
    '`verify: reads` is on for the network and an eth_getProof names more storage slots than it proves in one call (256): ask for them in several calls (docs/verified-answers.md)',
  VERIFY_NODES_LACK:
    '`verify: reads` is on for the network and a verified read needs a method none of its nodes serves: the receipts of a block of more than 1,000 transactions where no node serves `eth_getBlockReceipts` (docs/verified-answers.md)',
  VERIFY_CALL_TOO_LARGE:
    "`verify: calls` is on for the network and a verified `eth_call` or `eth_estimateGas` would prove more than 64 accounts and storage slots (the sender, the recipient, the block's miner and the client's access list counted before any node is asked; what the run reads counted after each round), or reads state beyond 4 rounds of proofs; no node is counted (docs/verified-answers.md)",
  VERIFY_GAS_CAPPED:
    "`verify: calls` is on and the call ran out of gas in the gateway's EVM with the gas it gives a run (the least of the call's gas, the block's gas limit and `evm.gasCap`) where a node answered a value, or a node's estimate is above `evm.gasCap`: the gateway's own bound, so no node is counted",
  VERIFY_RUN_TIMEOUT:
    "`verify: calls` is on and a run of the gateway's EVM for the call was still going after `evm.timeoutMs`: it was stopped (its worker thread ended and replaced); charged for the gas it was given (docs/costs.md)",
  NODES_BUSY:
    "every slot of the node chosen (`upstreams[].maxInFlight`, this instance's share) stayed taken longer than `limits.capacityWaitMs` (with `Retry-After`; docs/upstream-selection.md)",
  UPSTREAM_ANSWER_TOO_LARGE: "the node's answer is over `limits.maxUpstreamBytes` (it is not tried on another node: the answer would be as large)",
  WS_TOO_MANY_CONNECTIONS: 'a WebSocket upgrade past `ws.maxConnectionsPerKey` open connections (the upgrade is refused)',
  WS_CONNECTION_COOLDOWN: 'a WebSocket upgrade during the cooldown after more than `ws.newConnectionsPerSecond` in one second (with `Retry-After`)',
  WS_PENALIZED: 'a WebSocket message during the penalty after repeated malformed or unsupported messages (`error.data.retryAfterMs`)',
  WS_TOO_MANY_SUBSCRIPTIONS: 'an `eth_subscribe` past `ws.maxSubscriptionsPerConnection` on one connection',
  NO_WS_UPSTREAM:
    'an `eth_subscribe` on a network none of whose nodes has a `ws` URL in the configuration (it can never be served there: no retry helps; `tollgate start` warns of such networks); counted in `tollgate_ws_subscribe_refused_total{reason="no-ws-upstream"}`',
  WS_TOO_MANY_LOGS_FILTERS:
    "an `eth_subscribe` to a new logs filter past `ws.maxLogsFiltersPerKey` distinct filters of the key on the network, `ws.maxLogsFiltersPerAccount` of its account, or `ws.maxLogsFiltersPerNetwork` on the network's nodes; or from an account holding more than the network has free (its share)",
}

export function renderErrorTable(): string {
  const rows = ['| code | HTTP | JSON-RPC | when |', '|---|---|---|---|']
  for (const code of Object.keys(ERRORS) as ErrorCode[]) {
    const e = ERRORS[code]
    rows.push(`| \`${code}\` | ${e.http} | ${e.rpc} | ${WHEN[code]} |`)
  }
  return rows.join('\n')
}
