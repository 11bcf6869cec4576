import { type ErrorCode, GatewayError } from './registry.js'
import {
  contractProblemWords,
  coverageGapWords,
  listed,
  subscribeProblemWords,
  unverified,
  type CoverageGap,
  type ContractProblem,
  type SubscribeProblem,
} from './problem-words.js'
import type { CheckSaid } from './verify-check.js'

// What the filter messages share.
const POLLED = 'every one polled within the last minute (an idle one would have been uninstalled to make room)'
const FEWER_FILTERS = 'uninstall filters you no longer poll (eth_uninstallFilter), or use eth_subscribe over WebSocket'
const FEWER_LOGS_FILTERS = 'put several addresses and topics in one filter, reuse a filter you hold, or unsubscribe some'

/** Where a refused request came from, as its Origin (else Referer) says. */
const cameFrom = (f: { origin: string; referer: string }) => (f.origin || f.referer || 'no Origin or Referer header').slice(0, 100)

/** A method name as a message shows it: quoted, cut after 64 characters (it is the client's, any length). */
const shownMethod = (method: string) => JSON.stringify(method.length > 64 ? `${method.slice(0, 64)}…` : method)

/** Whose rule refused (key-rules.ts): a key's lists are changed in the dashboard, a token's by its issuer. */
type Whose = 'key' | 'token'
const fixRule = (whose: Whose) => (whose === 'key' ? "change the key's restrictions in the dashboard" : 'issue a token that allows it')

/**
 * Why a verified read is refused by this gateway's own bounds, or for a method no node serves
 * (verified-reads/: ProofTooWide, LogsRangeTooWide, NodesLack, RunRefused's `what`): the words after
 * the colon of the MESSAGES entry each group is named for, one per situation, so that a call site
 * names its situation and its facts.
 * @example new ProofTooWide(REFUSED_BECAUSE.PROOF_TOO_WIDE.SLOTS({ slots: 300, max: 256 }))
 */
export const REFUSED_BECAUSE = {
  PROOF_TOO_WIDE: {
    SLOTS: (f: { slots: number; max: number }) => `${f.slots} storage slots; at most ${f.max} are proven per call: ask for the slots in several calls`,
  },
  LOGS_RANGE_TOO_WIDE: {
    BLOCKS: (f: { blocks: number; max: number }) => `${f.blocks} blocks; at most ${f.max} are proven per call: ask for a narrower block range`,
    // The blocks whose logsBloom may match the filter: each is a receipts proof.
    CANDIDATES: (f: { candidates: number; max: number }) =>
      `${f.candidates} blocks of the range may hold matching logs; at most ${f.max} are proven per call: ask for a narrower block range, or a narrower filter (addresses, topics)`,
  },
  NODES_LACK: {
    BLOCK_RECEIPTS: (f: { transactions: number; oneByOne: number }) =>
      `eth_getBlockReceipts, which proving the receipts of a block of ${f.transactions} transactions needs (at most ${f.oneByOne} are proven one by one)`,
  },
  RUN_GAS_CAPPED: {
    OUT_OF_GAS: (f: { gas: bigint }) => `it ran out of gas with ${f.gas} gas`,
    ESTIMATE_ABOVE_RUN: (f: { estimate: bigint; gas: bigint }) => `the estimate ${f.estimate} is above the ${f.gas} gas a run here is given (evm.gasCap)`,
  },
  RUN_READS_TOO_MUCH: {
    ACCESS_LIST: (f: { wanted: number; max: number }) =>
      `its access list names ${f.wanted} accounts and storage keys with the sender, recipient and block's miner, and at most ${f.max} are proven for one call; send a shorter access list (or none: the gateway finds what the call reads)`,
    ROUNDS: (f: { rounds: number }) => `it read state beyond ${f.rounds} rounds of proofs; send an access list of what it reads (eth_createAccessList)`,
    READS: (f: { wanted: number; max: number }) =>
      `it reads ${f.wanted} accounts and storage slots, and at most ${f.max} are proven for one call; split it into smaller calls`,
  },
} as const satisfies { readonly [M in MessageName]?: Record<string, (facts: never) => string> }

/** A template that needs no facts beyond its name. */
type NoFacts = Record<never, never>

/**
 * The messages that carry a call's own facts (which network, how long it waited, what the node
 * did), each under a name of its own with the registry code it answers, so that every word a
 * client reads is written here or in ERRORS (a WebSocket close's in close-reasons.ts, a failed
 * check's in failed-checks.ts), and a call site says what happened, not how to say it. A code's
 * plain message (ERRORS) is what it says when there are no facts to give; a code may have
 * several messages here, one per situation.
 * @example refusal('NO_HEALTHY_NODE', { kind: 'full', network: 'eth-1' }).message // 'No healthy full node for eth-1 right now; retry with backoff'
 */
export const MESSAGES = {
  // The node could not serve the call (gatewayErrorFor): what the node did, never which node.
  NO_HEALTHY_NODE: {
    code: 'NO_HEALTHY_UPSTREAM',
    text: (f: { kind: string; network: string; why?: string }) =>
      `No healthy ${f.kind} node for ${f.network} right now${f.why ? ` (${f.why})` : ''}; retry with backoff`,
  },
  NODES_AT_CAPACITY: {
    code: 'NODES_BUSY',
    text: (f: { waitedMs: number }) =>
      `The nodes for this call are at capacity: it waited ${f.waitedMs} ms for a free slot and got none; retry after the time in Retry-After, with backoff`,
  },
  NO_NODE_SERVES_METHOD: {
    code: 'METHOD_NOT_FOUND',
    text: (f: { kind: string; network: string; method: string }) =>
      `Method not found: no ${f.kind} node of ${f.network} serves ${f.method} (each said so within the last few minutes)`,
  },
  NODES_DISAGREE: {
    code: 'NODES_DISAGREE',
    text: (f: { what: string }) => `The nodes disagree on this answer: ${f.what}; retry (a node may be catching up), and report it if it persists`,
  },
  NODE_TIMED_OUT: {
    code: 'UPSTREAM_TIMEOUT',
    text: (f: { what: string }) => `The node did not answer in time: ${f.what}; retry, or split the call (for eth_getLogs, a narrower block range)`,
  },
  NODE_ANSWER_TOO_LARGE: {
    code: 'UPSTREAM_ANSWER_TOO_LARGE',
    text: (f: { what: string }) =>
      `The node sent ${f.what} bytes that this gateway passes on (limits.maxUpstreamBytes); ask for less: a narrower block range, fewer calls in a batch`,
  },
  NODE_FAILED: { code: 'UPSTREAM_ERROR', text: (f: { what: string }) => `The node failed to answer: ${f.what}; retry with backoff` },
  HEAVY_CALLS_BUSY: {
    code: 'HEAVY_CALLS_BUSY',
    text: (f: { max: number; waitedMs: number; retryAfterS: number }) =>
      `Too many heavy calls at once: this key may have ${f.max} heavy calls (traces, debug_trace*, eth_getLogs, eth_getBlockReceipts, methods forwarded outside the method table…) running at once, ` +
      `and none finished within ${f.waitedMs} ms; retry after ${f.retryAfterS} s, or send them one after another`,
  },

  // Verified answers: what the gateway proves in one call, and a check no node passed.
  ANSWER_UNVERIFIED: {
    code: 'ANSWER_UNVERIFIED',
    text: (f: { what: string }) => unverified(f.what),
  },
  // A check failed outside a read's own retries (a header's walk to the checkpoint): the check's facts.
  ANSWER_FAILED_CHECK: {
    code: 'ANSWER_UNVERIFIED',
    text: (f: CheckSaid) => unverified(`${f.check}: ${f.subject}: ${f.expected}, got ${f.got}`),
  },
  PROOF_TOO_WIDE: {
    code: 'VERIFY_PROOF_TOO_WIDE',
    text: (f: { what: string }) => `This eth_getProof names more storage slots than this gateway proves in one call: ${f.what}`,
  },
  NODES_LACK: {
    code: 'VERIFY_NODES_LACK',
    text: (f: { what: string }) => `This verified read needs of the network's nodes what none of them serves: ${f.what}`,
  },
  LOGS_RANGE_TOO_WIDE: {
    code: 'VERIFY_RANGE_TOO_WIDE',
    text: (f: { what: string }) => `This eth_getLogs range is wider than this gateway proves in one call: ${f.what}`,
  },
  // Refused at admission (verified-reads/log-range-admission.ts), before any node is asked: the range a call may have instead.
  LOGS_RANGE_TOO_WIDE_TO_PROVE: {
    code: 'VERIFY_RANGE_TOO_WIDE',
    text: (f: { blocks: number; from: number; to: number; max: number }) =>
      `eth_getLogs block range too wide to prove: ${f.blocks} blocks (0x${f.from.toString(16)} to 0x${f.to.toString(16)}), at most ${f.max} are proven in one call: ask for a narrower block range, such as [0x${f.from.toString(16)}, 0x${(f.from + f.max - 1).toString(16)}].`,
  },
  RUN_GAS_CAPPED: {
    code: 'VERIFY_GAS_CAPPED',
    text: (f: { what: string }) => `This call needs more gas than this gateway's EVM runs a verified call with: ${f.what}; send less work in one call`,
  },
  RUN_READS_TOO_MUCH: {
    code: 'VERIFY_CALL_TOO_LARGE',
    text: (f: { what: string }) => `This call reads more state than this gateway proves for one verified call: ${f.what}`,
  },
  RUN_TIMED_OUT: {
    code: 'VERIFY_RUN_TIMEOUT',
    text: (f: { timeoutMs: number }) =>
      `This call ran longer than ${f.timeoutMs} ms in this gateway's EVM (evm.timeoutMs) and was stopped; send less work in one call, or less gas`,
  },

  // Filters: which share of the filter table was full (FilterPins), and its setting.
  KEY_FILTERS_FULL: {
    code: 'TOO_MANY_FILTERS',
    text: (f: { network: string; held: number; max: number }) =>
      `Too many filters: this key holds ${f.held} live filters on ${f.network}, at most ${f.max} per key and network (limits.maxFiltersPerKey), ${POLLED}; ${FEWER_FILTERS}`,
  },
  ACCOUNT_FILTERS_FULL: {
    code: 'TOO_MANY_FILTERS',
    text: (f: { network: string; held: number; max: number }) =>
      `Too many filters: the keys of this account hold ${f.held} live filters on ${f.network}, at most ${f.max} per account and network (limits.maxFiltersPerAccount), ${POLLED}; ${FEWER_FILTERS}`,
  },
  INSTANCE_FILTERS_FULL: {
    code: 'TOO_MANY_FILTERS',
    text: (f: { held: number; max: number }) =>
      `Too many filters: this gateway instance holds ${f.held} live filters for all keys, at most ${f.max}; retry later, or use eth_subscribe over WebSocket`,
  },

  // Signed tokens (TokenVerifier): which check failed, and what the token's issuer can fix.
  TOKEN_TOO_LARGE: {
    code: 'TOKEN_TOO_LARGE',
    text: (f: { length: number; max: number }) => `Invalid token: ${f.length} characters, at most ${f.max} are read; send fewer or shorter claims`,
  },
  TOKEN_NOT_JSON: {
    code: 'TOKEN_MALFORMED',
    text: (f: { why: string }) => `Invalid token: its header or claims are not base64url JSON objects (${f.why})`,
  },
  TOKEN_REFUSED_BY_JOSE: { code: 'TOKEN_MALFORMED', text: (f: { why: string }) => `Invalid token: ${f.why}` },
  TOKEN_UNVERIFIABLE: { code: 'TOKEN_MALFORMED', text: (_: NoFacts) => 'Invalid token: it could not be verified' },
  TOKEN_ALG_UNKNOWN: {
    code: 'TOKEN_ALG_NOT_ALLOWED',
    text: (f: { alg: string; accepted: readonly string[] }) =>
      `Invalid token: algorithm ${JSON.stringify(f.alg.slice(0, 20))} is not accepted (${f.accepted.join(', ')}, as the key registered); none and HMAC never are`,
  },
  TOKEN_ALG_NOT_THE_KEYS: {
    code: 'TOKEN_ALG_NOT_ALLOWED',
    text: (f: { alg: string; kid: string; keyAlg: string }) =>
      `Invalid token: signed as ${f.alg}, but key ${f.kid} is registered for ${f.keyAlg}; sign with ${f.keyAlg}`,
  },
  TOKEN_NO_KID: { code: 'TOKEN_UNKNOWN_KID', text: (_: NoFacts) => 'Invalid token: its header has no kid; name the registered key that signed it' },
  TOKEN_KID_NOT_REGISTERED: {
    code: 'TOKEN_UNKNOWN_KID',
    text: (f: { kid: string; registered: readonly string[] }) =>
      `Invalid token: kid ${JSON.stringify(f.kid.slice(0, 64))} is not registered on the key's account (${f.registered.length === 0 ? 'it has none' : `it has ${f.registered.join(', ')}`}); register it, or fix the kid`,
  },
  TOKEN_WRONG_AUDIENCE: {
    code: 'TOKEN_WRONG_AUDIENCE',
    text: (f: { audience: string }) => `Invalid token: its aud is not this gateway's audience ${JSON.stringify(f.audience)}; issue it for that audience`,
  },
  TOKEN_CLAIM_INVALID: { code: 'TOKEN_CLAIMS_INVALID', text: (f: { what: string }) => `Invalid token: ${f.what}; fix the token issuer (docs/keys.md)` },

  // The request (front/, ws/ws-server.ts, rpc-dispatcher.ts): its body, its batch, its keys.
  BODY_OVER_LIMIT: {
    code: 'BODY_TOO_LARGE',
    text: (f: { size?: number; max: number }) =>
      `Request body too large: ${f.size === undefined ? 'more than' : `${f.size} bytes;`} at most ${f.max} bytes are accepted; split the batch or the call`,
  },
  BODY_LATE: {
    code: 'BODY_TIMEOUT',
    text: (f: { bodyBytes: number; declaredLength: number; timeoutMs: number }) =>
      `Request body not received in time: ${f.declaredLength > 0 ? `${f.bodyBytes} of the ${f.declaredLength} bytes announced` : `${f.bodyBytes} bytes`} arrived within ${f.timeoutMs} ms (limits.bodyTimeoutMs); send the whole body right after the headers`,
  },
  BATCH_OVER_LIMIT: {
    code: 'BATCH_TOO_LARGE',
    text: (f: { calls: number; max: number }) =>
      `Batch too large: ${f.calls} calls, at most ${f.max} are accepted in one batch; split it into several requests`,
  },
  KEY_NAMED_TWICE: {
    code: 'CONFLICTING_KEYS',
    text: (f: { twice: 'Authorization headers' | '?apikey=' }) =>
      `Conflicting keys: the request names more than one key (two ${f.twice} name different keys); send one key, in one place, once`,
  },
  TOKEN_SUB_NOT_APIKEY: {
    code: 'CONFLICTING_KEYS',
    text: (_: NoFacts) => "Conflicting keys: the token's sub names another key than ?apikey=; send the token alone, or with its own key",
  },

  // Who the request is (key-directory.ts, admission.ts, ip-directory.ts) and what its plan lets it use.
  UNKNOWN_NETWORK_NAMED: {
    code: 'UNKNOWN_NETWORK',
    text: (f: { network: string; served: readonly string[] }) =>
      `Unknown network ${JSON.stringify(f.network.slice(0, 40))}: this gateway serves ${f.served.join(', ')}`,
  },
  KEY_MALFORMED: {
    code: 'INVALID_KEY',
    text: (_: NoFacts) => 'Invalid API key: it is not in the format this gateway issues (tg_ followed by 38 letters and digits); check for a copy/paste error',
  },
  KEY_REVOKED: {
    code: 'INVALID_KEY',
    text: (_: NoFacts) => 'Invalid API key: this key was revoked or regenerated; use the current key from the dashboard (My Subscription)',
  },
  TOKEN_SUB_UNKNOWN: {
    code: 'INVALID_KEY',
    text: (_: NoFacts) => 'Invalid token: its sub names no key of this gateway; sub must be the key id (key_…) from the dashboard',
  },
  CONNECTION_TOKEN_EXPIRED: {
    code: 'TOKEN_EXPIRED',
    text: (_: NoFacts) => 'Token expired: the token this connection was opened with is past its exp; reconnect with a new token',
  },
  NO_ACTIVE_PLAN: {
    code: 'PLAN_INACTIVE',
    text: (_: NoFacts) => "Forbidden: the account has no active plan; choose one in the dashboard's Plans section",
  },
  // A free trial (all full nodes, no price) is not renewed: another plan is chosen.
  TRIAL_ENDED: {
    code: 'PLAN_INACTIVE',
    text: (f: { plan: string; endedAt: number }) =>
      `Forbidden: the ${f.plan} of this account ended at ${new Date(f.endedAt).toISOString()}; choose a plan in the dashboard's Plans section to go on`,
  },
  PLAN_ENDED: {
    code: 'PLAN_INACTIVE',
    text: (f: { plan: string; endedAt: number }) =>
      `Forbidden: the ${f.plan} plan of this account ended at ${new Date(f.endedAt).toISOString()}; renew it (another payment) or choose another plan in the dashboard`,
  },
  PLAN_DOES_NOT_COVER: { code: 'NODE_KIND_NOT_ALLOWED', text: (f: CoverageGap & { network: string }) => `Forbidden: ${coverageGapWords(f)}` },
  PLAN_LACKS_KIND: {
    code: 'NODE_KIND_NOT_ALLOWED',
    text: (f: { plan?: string; kind: string }) =>
      `Forbidden: the ${f.plan ?? 'current'} plan has no ${f.kind}-node access; choose a plan that includes ${f.kind} nodes`,
  },
  ORIGIN_NOT_ON_KEY: {
    code: 'ORIGIN_NOT_ALLOWED',
    text: (f: { allowed: readonly string[]; origin: string; referer: string }) =>
      `Forbidden: this key may only be used from ${f.allowed.join(', ')} (the request came from ${cameFrom(f)}); change the allowlist in the dashboard`,
  },
  // A CORS preflight names its origin; the browser stops there, before it sends the key.
  PREFLIGHT_ORIGIN_NOT_ON_KEY: {
    code: 'ORIGIN_NOT_ALLOWED',
    text: (f: { allowed: readonly string[] }) => `Forbidden: this key may only be used from ${f.allowed.join(', ')}; change the allowlist in the dashboard`,
  },
  ORIGIN_NOT_IN_TOKEN: {
    code: 'ORIGIN_NOT_ALLOWED',
    text: (f: { allowed: readonly string[]; origin: string; referer: string }) =>
      `Forbidden by the token's origins: it may only be used from ${f.allowed.join(', ') || 'no origin'} (the request came from ${cameFrom(f)}); issue a token for this origin`,
  },
  IP_THROTTLED_UNTIL: {
    code: 'IP_THROTTLED',
    text: (f: { rejections: number; windowMs: number; until: number; retryAfterS: number }) =>
      `Too many requests from this IP address: its calls kept exceeding rate limits (${f.rejections} rejected within ${f.windowMs / 1000} s), so it is throttled for every key until ${new Date(f.until).toISOString()}; retry after ${f.retryAfterS} s with exponential backoff`,
  },

  // A key's rules (key-rules.ts): which rule, what it lists, and who can change it.
  KEY_METHOD_NOT_LISTED: {
    code: 'KEY_METHOD_NOT_ALLOWED',
    text: (f: { whose: Whose; method: string; allowed: readonly string[] }) =>
      `Forbidden by the ${f.whose}'s method rule: ${JSON.stringify(f.method.slice(0, 64))} is not among the methods this ${f.whose} may call (${listed(f.allowed)}); ${fixRule(f.whose)}`,
  },
  KEY_METHOD_DENIED: {
    code: 'KEY_METHOD_NOT_ALLOWED',
    text: (f: { whose: Whose; method: string; denied: readonly string[] }) =>
      `Forbidden by the ${f.whose}'s method rule: this ${f.whose} may not call ${JSON.stringify(f.method.slice(0, 64))} (denied: ${listed(f.denied)}); ${fixRule(f.whose)}`,
  },
  KEY_CONTRACT_NOT_LISTED: {
    code: 'KEY_CONTRACT_NOT_ALLOWED',
    text: (f: { whose: Whose; problem: ContractProblem; allowed: readonly string[] }) =>
      `Forbidden by the ${f.whose}'s contract rule: ${contractProblemWords(f.problem)}; this ${f.whose} may only name ${listed(f.allowed)} (docs/keys.md says what each method is matched on)`,
  },
  KEY_IP_NOT_LISTED: {
    code: 'KEY_IP_NOT_ALLOWED',
    text: (f: { allowed: readonly string[]; ip: string }) =>
      `Forbidden by the key's IP rule: this key may only be used from ${listed(f.allowed)} (the request came from ${f.ip.slice(0, 45) || 'an unknown address'}); ${fixRule('key')}`,
  },
  KEY_USER_AGENT_NOT_LISTED: {
    code: 'KEY_USER_AGENT_NOT_ALLOWED',
    text: (f: { allowed: readonly string[]; userAgent: string }) =>
      `Forbidden by the key's user-agent rule: the User-Agent must contain one of ${listed(f.allowed.map((u) => JSON.stringify(u)))} (the request sent ${f.userAgent === '' ? 'no User-Agent header' : JSON.stringify(f.userAgent.slice(0, 100))}); ${fixRule('key')}`,
  },

  // Rate limits (call-charge.ts, ws/ws-session.ts): which limit, and when to come back.
  KEY_UNITS_PER_SECOND: {
    code: 'RATE_LIMITED',
    text: (f: { limit: number; kind: string; units: number; retryAfterS: number }) =>
      `Rate limit exceeded: this key may spend ${f.limit} compute units per second on ${f.kind} nodes, and these calls cost ${f.units} (docs/costs.md); retry after ${f.retryAfterS} s, with exponential backoff`,
  },
  KEY_CALLS_PER_SECOND: {
    code: 'RATE_LIMITED',
    text: (f: { limit: number; kind: string; retryAfterS: number }) =>
      `Rate limit exceeded: this key may make ${f.limit} ${f.kind}-node calls per second; retry after ${f.retryAfterS} s, with exponential backoff`,
  },
  KEY_WS_MESSAGES_PER_SECOND: {
    code: 'RATE_LIMITED',
    text: (f: { limit: number; retryAfterMs: number }) =>
      `Rate limit exceeded: this key may send ${f.limit} messages per second over WebSocket (each call of a batch counts); retry after ${f.retryAfterMs} ms, with exponential backoff`,
  },
  WS_MESSAGES_PENALIZED: {
    code: 'WS_PENALIZED',
    text: (f: { until: number; retryAfterMs: number }) =>
      `Messages refused until ${new Date(f.until).toISOString()} (${Math.ceil(f.retryAfterMs / 1000)} s): this key sent repeated malformed or unsupported messages`,
  },

  // WebSocket connections and subscriptions (ws/): how many, and what else to do.
  WS_CONNECTIONS_FULL: {
    code: 'WS_TOO_MANY_CONNECTIONS',
    text: (f: { limit: number }) =>
      `Too many WebSocket connections: this key may hold ${f.limit} open at once; close one, or share one connection between your subscriptions`,
  },
  WS_CONNECTIONS_TOO_FAST: {
    code: 'WS_CONNECTION_COOLDOWN',
    text: (f: { connections: number; retryAfterS: number }) =>
      `Too many new WebSocket connections: ${f.connections} within a second; new connections of this key are blocked for ${f.retryAfterS} s`,
  },
  WS_CONNECTIONS_COOLING: {
    code: 'WS_CONNECTION_COOLDOWN',
    text: (f: { retryAfterS: number }) =>
      `New WebSocket connections of this key are blocked for ${f.retryAfterS} s more (cooldown after too many in one second)`,
  },
  WS_SUBSCRIPTIONS_FULL: {
    code: 'WS_TOO_MANY_SUBSCRIPTIONS',
    text: (f: { held: number; max: number }) =>
      `Too many subscriptions: this connection holds ${f.held}, at most ${f.max} are allowed per connection (ws.maxSubscriptionsPerConnection); unsubscribe some, or open another connection`,
  },
  NO_WS_NODE_CONFIGURED: {
    code: 'NO_WS_UPSTREAM',
    text: (f: { network: string }) =>
      `Subscriptions are not served on ${f.network}: none of its nodes is configured with a WebSocket (networks.${f.network}.upstreams[].ws); poll instead (eth_newBlockFilter, eth_getFilterChanges, eth_getLogs), or ask the operator to give a node its ws URL`,
  },
  NO_WS_NODE_REACHABLE: {
    code: 'NO_HEALTHY_UPSTREAM',
    text: (f: { network: string }) => `No node with a WebSocket is reachable for ${f.network} subscriptions right now; retry with backoff`,
  },
  SUBSCRIBE_PARAMS: { code: 'INVALID_PARAMS', text: (f: SubscribeProblem) => `Invalid params: ${subscribeProblemWords(f)}` },
  UNSUBSCRIBE_PARAMS: { code: 'INVALID_PARAMS', text: (_: NoFacts) => 'Invalid params: eth_unsubscribe takes [subscriptionId]' },
  // Logs subscriptions (ws/logs-filter-refusal.ts): which cap of the hub was full, and its setting.
  KEY_LOGS_FILTERS_FULL: {
    code: 'WS_TOO_MANY_LOGS_FILTERS',
    text: (f: { network: string; held: number; max: number }) =>
      `Too many logs filters: this key holds ${f.held} distinct logs filters on ${f.network}, at most ${f.max} are allowed per key and network (ws.maxLogsFiltersPerKey); ${FEWER_LOGS_FILTERS}`,
  },
  ACCOUNT_LOGS_FILTERS_FULL: {
    code: 'WS_TOO_MANY_LOGS_FILTERS',
    text: (f: { network: string; held: number; max: number }) =>
      `Too many logs filters: the keys of this account hold ${f.held} distinct logs filters on ${f.network}, at most ${f.max} are allowed per account and network (ws.maxLogsFiltersPerAccount); ${FEWER_LOGS_FILTERS}`,
  },
  NETWORK_LOGS_FILTERS_FULL: {
    code: 'WS_TOO_MANY_LOGS_FILTERS',
    text: (f: { network: string; held: number; max: number }) =>
      `Too many logs filters on ${f.network}: the gateway holds ${f.held} distinct logs subscriptions on its nodes, at most ${f.max} (ws.maxLogsFiltersPerNetwork); subscribe to a filter already in use, or retry later`,
  },
  // The share: the network's free filters are kept for accounts holding fewer than this one.
  SHARE_LOGS_FILTERS_FULL: {
    code: 'WS_TOO_MANY_LOGS_FILTERS',
    text: (f: { network: string; held: number; max: number }) =>
      `Too many logs filters on ${f.network}: this account holds ${f.held} distinct logs filters and the network has ${f.max} free (ws.maxLogsFiltersPerNetwork), which are kept for accounts holding fewer; reuse a filter you hold, unsubscribe some, or retry later`,
  },
  // Routing (gateway/router.ts): which node kind a call needs that the network or the plan lacks.
  NETWORK_HAS_NO_ARCHIVE: {
    code: 'METHOD_NOT_FOUND',
    text: (f: { method: string }) => `Method not found: ${f.method} needs an archive node, and this network has none`,
  },
  PLAN_HAS_NO_ARCHIVE_FOR: {
    code: 'METHOD_NOT_FOUND',
    text: (f: { namespace: string; plan: string }) => `Method not found: ${f.namespace}_* needs an archive node; the ${f.plan} plan has none on this network`,
  },
  STATE_OLDER_THAN_FULL_NODES_KEEP: {
    code: 'ARCHIVE_REQUIRED',
    text: (f: { block: number; windowBlocks: number; head: number; plan: string }) =>
      `State at block ${f.block} is older than the ${f.windowBlocks} blocks full nodes keep (head ${f.head}); the ${f.plan} plan has no archive access on this network: query a recent block, or choose a plan with archive nodes`,
  },
  // Methods (rpc/method-policy.ts): why a method is not served, before any node is asked.
  METHOD_NEEDS_WEBSOCKET: {
    code: 'METHOD_NOT_FOUND',
    text: (f: { method: string }) => `Method not found: ${f.method} needs a WebSocket connection; connect to /ws/<network>?apikey=<API_KEY>`,
  },
  METHOD_NAME_MALFORMED: {
    code: 'METHOD_NOT_FOUND',
    text: (f: { method: string }) =>
      `Method not found: ${shownMethod(f.method)} is not a method name: <namespace>_<name>, letters, digits and _ only, at most 64 characters after the namespace`,
  },
  METHOD_NAMESPACE_UNKNOWN: {
    code: 'METHOD_NOT_FOUND',
    text: (f: { method: string; served: readonly string[] }) =>
      `Method not found: ${shownMethod(f.method)}; methods are <namespace>_<name> in ${f.served.join(', ')}`,
  },
  METHOD_NOT_FORWARDED: {
    code: 'METHOD_NOT_FOUND',
    text: (f: { method: string }) =>
      `Method not found: ${f.method} is not forwarded by this gateway (it is not in its method table, docs/costs.md); the operator may allow it on this network with forwardMethods`,
  },
  METHOD_REFUSED: {
    code: 'METHOD_NOT_FOUND',
    text: (f: { method: string; reason: string }) => `Method not found: ${f.method} is not available through this gateway: it ${f.reason}`,
  },
  NAMESPACE_REFUSED: {
    code: 'METHOD_NOT_FOUND',
    text: (f: { namespace: string; reason: string }) =>
      `Method not found: ${f.namespace}_* methods are not available through this gateway: the namespace ${f.reason}`,
  },
  // Params objects (rpc/params-objects.ts): a member the gateway would read otherwise than the node.
  CALL_DATA_TWICE: {
    code: 'CALL_DATA_AMBIGUOUS',
    text: (f: { method: string }) =>
      `Invalid params: ${f.method}'s transaction object has both "data" and "input", and they differ; nodes read one or the other (geth refuses it, reth and anvil run "input"): send the call data once, as "input"`,
  },
  LOGS_BOUND_IS_OBJECT: {
    code: 'LOGS_BOUND_OBJECT',
    text: (f: { method: string; bound: 'fromBlock' | 'toBlock'; value: unknown }) =>
      `Invalid params: ${f.method}'s ${f.bound} is an object (${JSON.stringify(f.value).slice(0, 100)}); fromBlock and toBlock take a block number or a tag ("latest", "finalized"…). To read one block's logs by its hash, write "blockHash" in the filter itself, without fromBlock and toBlock`,
  },
  MEMBER_IN_OTHER_CASE: {
    code: 'PARAMS_MEMBER_CASE',
    text: (f: { method: string; what: string; name: string; canonical: string }) =>
      `Invalid params: ${f.method}'s ${f.what} has a member ${JSON.stringify(f.name.slice(0, 64))}, which nodes written in Go (geth, Erigon) read as "${f.canonical}" since they ignore case, where this gateway reads names exactly; write "${f.canonical}", exactly and once`,
  },
} as const satisfies Record<string, { code: ErrorCode; text: (facts: never) => string }>

export type MessageName = keyof typeof MESSAGES
export type FactsOf<M extends MessageName> = Parameters<(typeof MESSAGES)[M]['text']>[0]

/**
 * The gateway error for a situation of MESSAGES: its code's status and JSON-RPC code, its
 * message filled with the facts.
 */
export function refusal<M extends MessageName>(name: M, facts: FactsOf<M>, options?: { cause?: unknown; headers?: Record<string, string> }): GatewayError {
  const { code, text } = MESSAGES[name]
  // Each entry's text takes its own facts; TypeScript cannot narrow the union by name here.
  return new GatewayError(code, (text as (facts: FactsOf<M>) => string)(facts), options)
}
