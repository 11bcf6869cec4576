import t, { type Test } from 'tap'
import { CLOSE_CODES, CLOSE_REASONS, type CloseReasonName, closing } from '../../src/errors/close-reasons.js'
import { FAILED_CHECKS, type FactsOfCheck, type FailedCheckName } from '../../src/errors/failed-checks.js'
import { type FactsOf, MESSAGES, type MessageName, refusal, REFUSED_BECAUSE } from '../../src/errors/messages.js'
import { PASSED_OVER_BECAUSE, UNVERIFIED_BECAUSE } from '../../src/errors/problem-words.js'
import { ERRORS, GatewayError } from '../../src/errors/registry.js'
import type { CheckSaid } from '../../src/errors/verify-check.js'
import { checkFailure } from '../../src/proofs/check-failure.js'
import { ProofError, VerificationError } from '../../src/proofs/errors.js'

// The templates of src/errors (messages.ts, failed-checks.ts, close-reasons.ts), each filled with
// sample facts: what a client or an operator would read. A new entry needs its row here (the
// tables are typed over every name, and the keys are compared), so that no template reaches a
// client unread.

const NETWORK = 'eth-1'
const ADDRESS = '0x' + 'ab'.repeat(20)
const HASH = '0x' + 'cd'.repeat(32)
const OTHER_HASH = '0x' + 'ef'.repeat(32)
const WHEN = Date.UTC(2026, 11, 3, 10, 0, 0)

type RefusedGroup = keyof typeof REFUSED_BECAUSE
/** The facts each situation of a group takes. */
type FactsOfSituations<T> = { readonly [S in keyof T]: T[S] extends (facts: infer F) => string ? F : never }
type RefusedSamples = { readonly [G in RefusedGroup]: FactsOfSituations<(typeof REFUSED_BECAUSE)[G]> }

/** One sample per situation of REFUSED_BECAUSE: each is the `what` of its group's MESSAGES entry, in SAMPLES. */
const REFUSED_SAMPLES: RefusedSamples = {
  PROOF_TOO_WIDE: { SLOTS: { slots: 300, max: 256 } },
  LOGS_RANGE_TOO_WIDE: { BLOCKS: { blocks: 5000, max: 1000 }, CANDIDATES: { candidates: 300, max: 200 } },
  NODES_LACK: { BLOCK_RECEIPTS: { transactions: 600, oneByOne: 512 } },
  RUN_GAS_CAPPED: { OUT_OF_GAS: { gas: 50_000_000n }, ESTIMATE_ABOVE_RUN: { estimate: 60_000_000n, gas: 50_000_000n } },
  RUN_READS_TOO_MUCH: { ACCESS_LIST: { wanted: 70, max: 64 }, ROUNDS: { rounds: 4 }, READS: { wanted: 80, max: 64 } },
}

/** The `what` of every situation of a REFUSED_BECAUSE group, each from its sample. */
const refusedWhats = (group: RefusedGroup): { what: string }[] =>
  Object.entries(REFUSED_BECAUSE[group]).map(([situation, words]) => ({
    what: (words as (facts: unknown) => string)((REFUSED_SAMPLES[group] as Record<string, unknown>)[situation]),
  }))

/** One or more sample facts per entry: an entry whose words depend on which case it is gets one per case. */
const SAMPLES: { readonly [N in MessageName]: readonly FactsOf<N>[] } = {
  NO_HEALTHY_NODE: [
    { kind: 'full', network: NETWORK },
    { kind: 'archive', network: NETWORK, why: 'every node is behind the head by more than 5 blocks' },
  ],
  NODES_AT_CAPACITY: [{ waitedMs: 250 }],
  NO_NODE_SERVES_METHOD: [{ kind: 'full', network: NETWORK, method: 'trace_block' }],
  NODES_DISAGREE: [{ what: '2 of 3 nodes gave different answers, 2 needed' }],
  NODE_TIMED_OUT: [{ what: 'no answer within 10000 ms' }],
  NODE_ANSWER_TOO_LARGE: [{ what: 'more than 16777216' }],
  NODE_FAILED: [{ what: 'the connection was reset' }],
  HEAVY_CALLS_BUSY: [{ max: 4, waitedMs: 2000, retryAfterS: 1 }],
  ANSWER_UNVERIFIED: [{ what: UNVERIFIED_BECAUSE.ANSWERS_FAILED({ failures: 2, check: 'ACCOUNT_PROOF', subject: `${ADDRESS} balance` }) }],
  ANSWER_FAILED_CHECK: [FAILED_CHECKS.TOO_FAR_FROM_CHECKPOINT.says({ maxBlocks: 100, checkpoint: 1000, blocks: 149 })],
  PROOF_TOO_WIDE: refusedWhats('PROOF_TOO_WIDE'),
  NODES_LACK: refusedWhats('NODES_LACK'),
  LOGS_RANGE_TOO_WIDE: refusedWhats('LOGS_RANGE_TOO_WIDE'),
  LOGS_RANGE_TOO_WIDE_TO_PROVE: [{ blocks: 2001, from: 0, to: 2000, max: 2000 }],
  RUN_GAS_CAPPED: refusedWhats('RUN_GAS_CAPPED'),
  RUN_READS_TOO_MUCH: refusedWhats('RUN_READS_TOO_MUCH'),
  RUN_TIMED_OUT: [{ timeoutMs: 5000 }],
  KEY_FILTERS_FULL: [{ network: NETWORK, held: 64, max: 64 }],
  ACCOUNT_FILTERS_FULL: [{ network: NETWORK, held: 256, max: 256 }],
  INSTANCE_FILTERS_FULL: [{ held: 100000, max: 100000 }],
  TOKEN_TOO_LARGE: [{ length: 9000, max: 8192 }],
  TOKEN_NOT_JSON: [{ why: 'Unexpected token } in JSON at position 12' }],
  TOKEN_REFUSED_BY_JOSE: [{ why: 'signature verification failed' }],
  TOKEN_UNVERIFIABLE: [{}],
  TOKEN_ALG_UNKNOWN: [{ alg: 'HS256', accepted: ['ES256', 'EdDSA'] }],
  TOKEN_ALG_NOT_THE_KEYS: [{ alg: 'ES256', kid: 'k1', keyAlg: 'EdDSA' }],
  TOKEN_NO_KID: [{}],
  TOKEN_KID_NOT_REGISTERED: [
    { kid: 'k9', registered: [] },
    { kid: 'k9', registered: ['k1', 'k2'] },
  ],
  TOKEN_WRONG_AUDIENCE: [{ audience: 'https://rpc.example.com' }],
  TOKEN_CLAIM_INVALID: [{ what: 'claim exp is missing' }],
  BODY_OVER_LIMIT: [{ size: 2_000_000, max: 1_048_576 }, { max: 1_048_576 }],
  BODY_LATE: [
    { bodyBytes: 100, declaredLength: 5000, timeoutMs: 10000 },
    { bodyBytes: 100, declaredLength: 0, timeoutMs: 10000 },
  ],
  BATCH_OVER_LIMIT: [{ calls: 1001, max: 1000 }],
  KEY_NAMED_TWICE: [{ twice: 'Authorization headers' }, { twice: '?apikey=' }],
  TOKEN_SUB_NOT_APIKEY: [{}],
  UNKNOWN_NETWORK_NAMED: [{ network: 'eth-5', served: ['eth-1', 'bsc-1', 'pol-1'] }],
  KEY_MALFORMED: [{}],
  KEY_REVOKED: [{}],
  TOKEN_SUB_UNKNOWN: [{}],
  CONNECTION_TOKEN_EXPIRED: [{}],
  NO_ACTIVE_PLAN: [{}],
  TRIAL_ENDED: [{ plan: 'Free Trial', endedAt: WHEN }],
  PLAN_ENDED: [{ plan: 'Tier 1', endedAt: WHEN }],
  PLAN_DOES_NOT_COVER: [
    { gap: 'no-plan', network: NETWORK },
    { gap: 'other-nodes', plan: 'Tier 1', chosen: [{ network: 'bsc-1', kind: 'full' }], network: NETWORK },
    { gap: 'none-chosen', plan: 'Tier 1', network: NETWORK },
    { gap: 'network', plan: 'Tier 3', network: NETWORK },
  ],
  PLAN_LACKS_KIND: [{ plan: 'Free Trial', kind: 'archive' }, { kind: 'archive' }],
  ORIGIN_NOT_ON_KEY: [
    { allowed: ['app.example.com'], origin: 'https://evil.example', referer: '' },
    { allowed: ['app.example.com'], origin: '', referer: '' },
  ],
  PREFLIGHT_ORIGIN_NOT_ON_KEY: [{ allowed: ['app.example.com', '*.example.org'] }],
  ORIGIN_NOT_IN_TOKEN: [
    { allowed: ['app.example.com'], origin: '', referer: 'https://other.example/page' },
    { allowed: [], origin: 'https://app.example.com', referer: '' },
  ],
  IP_THROTTLED_UNTIL: [{ rejections: 500, windowMs: 60_000, until: WHEN, retryAfterS: 300 }],
  KEY_METHOD_NOT_LISTED: [
    { whose: 'key', method: 'eth_sendRawTransaction', allowed: ['eth_call', 'eth_getBalance'] },
    { whose: 'token', method: 'debug_traceCall', allowed: ['a_1', 'a_2', 'a_3', 'a_4', 'a_5', 'a_6', 'a_7'] },
  ],
  KEY_METHOD_DENIED: [{ whose: 'key', method: 'debug_traceCall', denied: ['debug_*', 'trace_*'] }],
  KEY_CONTRACT_NOT_LISTED: [
    ...(
      [
        { problem: 'method-not-in-table', method: 'foo_bar' },
        { problem: 'names-unchecked', method: 'trace_filter' },
        { problem: 'no-transaction-object', method: 'eth_call' },
        { problem: 'creation-without-to', method: 'eth_estimateGas' },
        { problem: 'no-signed-transaction', method: 'eth_sendRawTransaction' },
        { problem: 'transaction-undecodable', method: 'eth_sendRawTransaction' },
        { problem: 'signed-creation', method: 'eth_sendRawTransaction' },
        { problem: 'filter-without-address', in: { method: 'eth_getLogs' } },
        { problem: 'filter-without-address', in: { logsSubscription: true } },
        { problem: 'address-missing', in: { method: 'eth_getBalance' }, member: 'address' },
        { problem: 'address-not-listed', in: { method: 'eth_call' }, member: 'to', address: '0x' + '77'.repeat(20) },
      ] as const
    ).map((problem) => ({ whose: 'key' as const, problem, allowed: [ADDRESS] })),
    { whose: 'token', problem: { problem: 'address-not-listed', in: { logsSubscription: true }, member: 'address', address: ADDRESS }, allowed: [] },
  ],
  KEY_IP_NOT_LISTED: [
    { allowed: ['10.0.0.0/8'], ip: '192.0.2.7' },
    { allowed: ['10.0.0.0/8'], ip: '' },
  ],
  KEY_USER_AGENT_NOT_LISTED: [
    { allowed: ['my-bot/'], userAgent: 'curl/8.0' },
    { allowed: ['my-bot/'], userAgent: '' },
  ],
  KEY_UNITS_PER_SECOND: [{ limit: 500, kind: 'full', units: 520, retryAfterS: 1 }],
  KEY_CALLS_PER_SECOND: [{ limit: 25, kind: 'archive', retryAfterS: 1 }],
  KEY_WS_MESSAGES_PER_SECOND: [{ limit: 100, retryAfterMs: 400 }],
  WS_MESSAGES_PENALIZED: [{ until: WHEN, retryAfterMs: 30_000 }],
  WS_CONNECTIONS_FULL: [{ limit: 10 }],
  WS_CONNECTIONS_TOO_FAST: [{ connections: 21, retryAfterS: 60 }],
  WS_CONNECTIONS_COOLING: [{ retryAfterS: 42 }],
  WS_SUBSCRIPTIONS_FULL: [{ held: 100, max: 100 }],
  NO_WS_NODE_CONFIGURED: [{ network: NETWORK }],
  NO_WS_NODE_REACHABLE: [{ network: NETWORK }],
  SUBSCRIBE_PARAMS: [
    { problem: 'no-kind' },
    { problem: 'unsupported-kind', kind: 'syncing' },
    { problem: 'new-heads-options' },
    { problem: 'pending-options' },
    { problem: 'logs-filters-many' },
    { problem: 'logs-filter-not-object' },
    { problem: 'logs-past-blocks' },
    { problem: 'logs-field-unknown', field: 'toAddress' },
    { problem: 'address-invalid', value: '0x12' },
    { problem: 'topics-not-array' },
    { problem: 'topics-too-many' },
    { problem: 'topic-invalid', value: 7 },
  ],
  UNSUBSCRIBE_PARAMS: [{}],
  KEY_LOGS_FILTERS_FULL: [{ network: NETWORK, held: 3, max: 3 }],
  ACCOUNT_LOGS_FILTERS_FULL: [{ network: NETWORK, held: 4, max: 4 }],
  NETWORK_LOGS_FILTERS_FULL: [{ network: NETWORK, held: 5, max: 5 }],
  SHARE_LOGS_FILTERS_FULL: [{ network: NETWORK, held: 3, max: 1 }],
  NETWORK_HAS_NO_ARCHIVE: [{ method: 'trace_block' }],
  PLAN_HAS_NO_ARCHIVE_FOR: [{ namespace: 'debug', plan: 'Tier 1' }],
  STATE_OLDER_THAN_FULL_NODES_KEEP: [{ block: 100, windowBlocks: 128, head: 5000, plan: 'Tier 1' }],
  METHOD_NEEDS_WEBSOCKET: [{ method: 'eth_subscribe' }],
  METHOD_NAME_MALFORMED: [{ method: 'eth-call' }, { method: `eth_${'x'.repeat(80)}` }],
  METHOD_NAMESPACE_UNKNOWN: [{ method: 'foo_bar', served: ['eth', 'net', 'web3', 'debug', 'trace'] }],
  METHOD_NOT_FORWARDED: [{ method: 'eth_newMethod' }],
  METHOD_REFUSED: [{ method: 'eth_sign', reason: 'would sign with a key held by the node' }],
  NAMESPACE_REFUSED: [{ namespace: 'admin', reason: 'controls the node itself' }],
  CALL_DATA_TWICE: [{ method: 'eth_call' }],
  LOGS_BOUND_IS_OBJECT: [{ method: 'eth_getLogs', bound: 'fromBlock', value: { blockHash: HASH } }],
  MEMBER_IN_OTHER_CASE: [{ method: 'eth_call', what: 'transaction object', name: 'TO', canonical: 'to' }],
}

const CHECK_SAMPLES: { readonly [N in FailedCheckName]: readonly FactsOfCheck<N>[] } = {
  ROOT_FROM_ANSWER: [{ check: 'RECEIPTS_ROOT', block: '0x10', root: HASH, computed: '0x' + 'ef'.repeat(32) }],
  WITHDRAWALS_WITHOUT_ROOT: [{ block: '0x10', withdrawals: 2 }],
  WITHDRAWAL_FIELDS: [{ index: 0, withdrawal: { index: 'zz', amount: '0x1' } }],
  PLACE_DIFFERS: [
    { check: 'RECEIPT_PLACE', field: 'receipt 0 blockNumber', expected: 16n, got: '0x11' },
    { check: 'RECEIPT_PLACE', field: 'receipt 0 to', expected: null, got: ADDRESS },
  ],
  RECEIPTS_NOT_ONE_PER_TRANSACTION: [{ block: '0x10', transactions: 3, receipts: 2 }],
  LOG_REMOVED: [{ log: 'receipt 0 log 1' }],
  FORK_FIELD_WITHOUT_EARLIER: [{ field: 'withdrawalsRoot', missing: 'baseFeePerGas' }],
  HEADER_HASH_FROM_FIELDS: [{ block: '0x10', claimed: HASH, computed: '0x' + 'ef'.repeat(32) }],
  NOT_A_QUANTITY: [{ check: 'HEADER_FIELDS', field: 'gasUsed', value: 'zz' }],
  NOT_HEX_DATA: [{ check: 'RECEIPTS_ROOT', field: 'receipt 0 log 0 data', value: '0xz' }],
  DATA_LENGTH: [{ check: 'RECEIPTS_ROOT', field: 'receipt 0 logsBloom', length: 256, bytes: 1 }],
  RECEIPT_TYPE_TOO_HIGH: [{ field: 'receipt 0 type', type: '0x80' }],
  PROOF_NOT_LINKED: [{ check: 'STORAGE_PROOF', subject: `${ADDRESS} slot 0x1`, root: HASH }],
  PROOF_OF_ANOTHER_ADDRESS: [{ asked: ADDRESS, proven: '0x' + '77'.repeat(20) }],
  ACCOUNT_LEAF_NOT_ACCOUNT: [{ address: ADDRESS, leaf: '0xc0' }],
  ACCOUNT_FIELD_DIFFERS: [{ address: ADDRESS, field: 'balance', proven: '0', claimed: '1000' }],
  STORAGE_KEYS_DIFFER: [{ address: ADDRESS, asked: ['0x1', '0x2'], answered: ['0x1'] }],
  STORAGE_VALUE_DIFFERS: [{ slot: `${ADDRESS} slot 0x1`, proven: '0x0', claimed: '0x1' }],
  STORAGE_LEAF_NOT_BYTES: [{ slot: `${ADDRESS} slot 0x1`, leaf: '0xc0' }],
  CODE_HASH_DIFFERS: [{ address: ADDRESS, codeHash: HASH, hash: '0x' + 'ef'.repeat(32) }],
  NUMBER_TOO_LARGE: [{ field: `transaction ${HASH} nonce`, value: 2n ** 60n }],
  TRANSACTION_TYPE_UNKNOWN: [{ hash: HASH, known: ['0x0', '0x1', '0x2'], type: '0x9' }],
  CHAIN_ID_NOT_V_S: [{ hash: HASH, ofV: 1n, chainId: '0x5' }],
  Y_PARITY_NOT_A_BIT: [{ hash: HASH, yParity: 2 }],
  V_NOT_Y_PARITY: [{ hash: HASH, yParity: 0, v: '0x1' }],
  TRANSACTION_NOT_ENCODABLE: [{ hash: HASH, why: 'Address "0x12" is invalid.' }],
  TRANSACTION_HASH_FROM_FIELDS: [{ hash: HASH, claimed: HASH, computed: '0x' + 'ef'.repeat(32) }],
  SIGNATURE_RECOVERS_NOBODY: [{ hash: HASH }],
  SENDER_NOT_SIGNER: [{ hash: HASH, signer: ADDRESS, from: '0x' + '77'.repeat(20) }],
  NOT_YET_LINKED: [{ block: 1149, checkpoint: 1000, blocks: 149 }],
  TOO_FAR_FROM_CHECKPOINT: [{ maxBlocks: 100, checkpoint: 1000, blocks: 149 }],
  OFF_THE_CHECKPOINT_CHAIN: [
    { block: 1000, linked: HASH, got: '0x' + 'ef'.repeat(32) },
    { block: 1000, linked: HASH, got: undefined },
  ],
  NO_HEADER_REPORTED: [{ tag: 'finalized' }],
  NO_QUORUM: [{ block: '0x10', quorum: 2, configured: 3, healthy: 1 }],
  HEADER_NOT_THE_NAMED: [{ named: HASH, hash: OTHER_HASH }],
  NAMED_BLOCK_NOT_AGREED: [
    { hash: HASH, number: 1234, agreed: null },
    { hash: HASH, number: 1234, agreed: OTHER_HASH },
  ],
  NOT_LINKED_TO_TRUSTED_BLOCK: [{ block: 117, expected: HASH, trusted: OTHER_HASH }],
  LINKED_HEADER_MISSING: [
    { block: 99, expected: HASH, none: 'no header' },
    { block: 99, expected: HASH, none: 'no answer' },
  ],
  PARENT_HASH_DIFFERS: [{ block: 99, expected: HASH, hash: OTHER_HASH }],
  NO_RESULT: [
    { check: 'HEADER_HASH', subject: `block ${HASH}`, answered: 'an error' },
    { check: 'RECEIPTS_ROOT', subject: `receipts of ${HASH}`, answered: 'null' },
  ],
  BLOCK_NOT_THE_TRUSTED: [{ trusted: HASH, hash: OTHER_HASH }],
  TRANSACTIONS_NOT_OBJECTS: [{}],
  RECEIPTS_NOT_A_LIST: [{ block: HASH, type: 'string' }],
  RECEIPT_BLOCK_HASH_INVALID: [{ blockHash: 12 }],
  BLOCK_NOT_CANONICAL: [
    { of: 'receipt', blockHash: HASH },
    { of: 'transaction', blockHash: HASH },
  ],
  NOT_IN_ITS_BLOCK: [
    { of: 'receipt', hash: OTHER_HASH, block: HASH },
    { of: 'transaction', hash: OTHER_HASH, block: HASH },
  ],
  NO_PROOF: [{ address: ADDRESS }],
  NOT_JSON: [{ check: 'CODE_HASH', method: 'eth_getCode' }],
  LOGS_NOT_A_LIST: [{ type: 'object' }],
  LOG_NOT_PROVEN: [
    { index: 3, proven: undefined, log: `${HASH}|${OTHER_HASH}|0x0` },
    { index: 0, proven: `${HASH}|${HASH}|0x1`, log: `${HASH}|${OTHER_HASH}|0x0` },
  ],
  LOGS_LEFT_OUT: [{ everyClient: 5, missing: 2 }],
  LOGS_NOT_CHECKABLE: [{}],
  CALL_RESULT_DIFFERS: [
    { ran: { end: 'returned', returned: '0x01' }, answered: { result: '0x02' } },
    { ran: { end: 'reverted', returned: '0x08c379a0' }, answered: { error: '0x00' } },
    { ran: { end: 'failed', returned: '0x', error: 'out of gas' }, answered: { result: '0x' } },
  ],
  CALL_NOT_CHECKABLE: [{}],
  ESTIMATE_NOT_A_QUANTITY: [{ result: '0xzz' }],
  ESTIMATE_ABOVE_CAP: [{ cap: 30_000_000n, estimate: '0x2faf081' }],
  ESTIMATE_TOO_LOW: [{ estimate: 21_000n }],
  ESTIMATE_TOO_HIGH: [{ estimate: 100_000n, works: 97_999n }],
  ESTIMATE_NOT_CHECKABLE: [{}],
}

const CLOSE_SAMPLES: { readonly [N in CloseReasonName]: readonly Parameters<(typeof CLOSE_REASONS)[N]['text']>[0][] } = {
  SHUTTING_DOWN: [{}],
  SLOW_CONSUMER_UNREAD: [{ maxBytes: 65536 }],
  SLOW_CONSUMER_DROPPED: [{}],
  ACCOUNT_NOTIFICATIONS_SPENT: [{ perSecond: 400 }],
  PLAN_UNITS_SPENT_ON_NOTIFICATIONS: [{ perSecond: 500, kind: 'full' }],
  ACCESS_WITHDRAWN: [{ refusal: refusal('KEY_REVOKED', {}) }, { refusal: refusal('CONNECTION_TOKEN_EXPIRED', {}) }],
}

const UNVERIFIED_SAMPLES: { readonly [N in keyof typeof UNVERIFIED_BECAUSE]: Parameters<(typeof UNVERIFIED_BECAUSE)[N]>[0] } = {
  ANSWERS_FAILED: { failures: 1, check: 'STORAGE_PROOF', subject: `${ADDRESS} slot 0x1` },
  RUN_FAILED: { check: 'CODE_HASH', subject: `${ADDRESS} code` },
  NO_ANSWER_OF_THE_BLOCK: { why: 'each answered for block 0x11' },
  BLOCK_NOT_CHECKABLE: { method: 'eth_getBalance' },
}

const PASSED_OVER_SAMPLES: { readonly [N in keyof typeof PASSED_OVER_BECAUSE]: readonly Parameters<(typeof PASSED_OVER_BECAUSE)[N]>[0][] } = {
  NODE_ERRED: [{ method: 'eth_getProof' }],
  NO_RECEIPT: [{ transaction: HASH }],
  OTHER_BLOCK: [
    { number: 17, hash: OTHER_HASH, trusted: HASH },
    { number: 17, hash: undefined, trusted: HASH },
  ],
}

/**
 * An instruction: a verb the reader acts on where a clause starts (after ; : , ( or "or"), or a
 * "must". A registry message with one says what to do, and so must every template of its code.
 */
const SAYS_WHAT_TO_DO =
  /\bmust\b|(?:^|[;:,(.]\s*|\bor\s+|\band\s+)(?:retry|send|choose|use|ask|change|issue|register|get|pass|connect|close|uninstall|subscribe|unsubscribe|split|wait|check|fix|sign|write|put|reuse|poll|query|renew|reconnect|read|report|open|share|keep|configure|include|name|give|reduce|POST)\b/i

/**
 * Templates whose code's plain message says what to do and which do not, each with why: the
 * words a client reads are kept as they are, so these are listed rather than rewritten here. The
 * test fails when one of them comes to say what to do (drop it from the list then).
 */
const SAYS_NOTHING_TO_DO: Partial<Record<MessageName, string>> = {
  TOKEN_NOT_JSON: "names the part of the token that is not JSON; the fix is the token issuer's",
  TOKEN_REFUSED_BY_JOSE: "the JWT library's own reason, as it gives it",
  TOKEN_UNVERIFIABLE: 'a failure inside the verifier: nothing for the client to change but the token',
  TOKEN_ALG_UNKNOWN: 'names the accepted algorithms (what to sign with) without a verb',
  WS_CONNECTIONS_TOO_FAST: 'says how long new connections are blocked (when to retry) without a verb',
  WS_CONNECTIONS_COOLING: 'says how long new connections are still blocked (when to retry) without a verb',
  NODES_LACK: "names the method the nodes lack and why it is needed; the fix is the operator's, as the code's message says",
}

/** What no message may show: a fact that was not filled in, or filled with an object. */
const UNFILLED = /undefined|NaN|\[object /

function wellFormed(t: Test, text: string, where: string): void {
  t.ok(text.length > 0, `${where}: not empty`)
  t.equal(text, text.trimEnd(), `${where}: no trailing space`)
  t.notMatch(text, UNFILLED, `${where}: every fact filled in`)
}

/** Each entry's words and its facts, for a loop over a table (TypeScript cannot pair them by name there). */
const textOf = (name: MessageName) => MESSAGES[name].text as (facts: unknown) => string

t.test('every entry of MESSAGES has its samples, and names a code of ERRORS', async (t) => {
  t.same(Object.keys(SAMPLES).sort(), Object.keys(MESSAGES).sort(), 'one row of samples per entry, and none for an entry that is gone')
  for (const [name, entry] of Object.entries(MESSAGES)) {
    t.ok(Object.hasOwn(ERRORS, entry.code), `${name}: ${entry.code} is in ERRORS`)
    t.ok((SAMPLES[name as MessageName] as readonly unknown[]).length > 0, `${name}: at least one sample`)
  }
})

t.test('every template, given its sample facts, yields a message a client can read', async (t) => {
  for (const name of Object.keys(MESSAGES) as MessageName[]) {
    const { code } = MESSAGES[name]
    const saysWhatToDo = SAYS_WHAT_TO_DO.test(ERRORS[code].message)
    for (const [i, facts] of (SAMPLES[name] as readonly unknown[]).entries()) {
      const text = textOf(name)(facts)
      const where = `${name} #${i}`
      wellFormed(t, text, where)
      if (saysWhatToDo && SAYS_NOTHING_TO_DO[name] === undefined) t.match(text, SAYS_WHAT_TO_DO, `${where}: says what to do, as ${code} does`)
    }
  }
})

t.test('the templates listed as saying nothing to do still do not, and their codes do', async (t) => {
  for (const [name, why] of Object.entries(SAYS_NOTHING_TO_DO) as [MessageName, string][]) {
    t.ok(why.length > 0, `${name}: the list says why`)
    t.match(ERRORS[MESSAGES[name].code].message, SAYS_WHAT_TO_DO, `${name}: its code's message says what to do (else it needs no place here)`)
    const texts = (SAMPLES[name] as readonly unknown[]).map((facts) => textOf(name)(facts))
    t.ok(
      texts.some((text) => !SAYS_WHAT_TO_DO.test(text)),
      `${name}: still says nothing to do (now it does: take it off the list)`,
    )
  }
})

t.test('refusal(name, facts) is the GatewayError of the entry: its code, HTTP status, JSON-RPC code and words', async (t) => {
  const cause = new Error('the cause')
  for (const name of Object.keys(MESSAGES) as MessageName[]) {
    const { code } = MESSAGES[name]
    const facts = (SAMPLES[name] as readonly unknown[])[0]
    const e = (refusal as (name: MessageName, facts: unknown, options?: { cause?: unknown }) => GatewayError)(name, facts, { cause })
    t.ok(e instanceof GatewayError, `${name}: a GatewayError`)
    t.equal(e.code, code, `${name}: code ${code}`)
    t.equal(e.http, ERRORS[code].http, `${name}: HTTP ${ERRORS[code].http}`)
    t.equal(e.rpc, ERRORS[code].rpc, `${name}: JSON-RPC ${ERRORS[code].rpc}`)
    t.equal(e.message, textOf(name)(facts), `${name}: the template's words`)
    t.equal(e.cause, cause, `${name}: the cause kept`)
  }
  const headers = { 'Retry-After': '1' }
  t.same(refusal('HEAVY_CALLS_BUSY', { max: 4, waitedMs: 2000, retryAfterS: 1 }, { headers }).headers, headers, 'headers kept (Retry-After)')
})

t.test('every failed check, given its sample facts, says where, what was required and what came', async (t) => {
  t.same(Object.keys(CHECK_SAMPLES).sort(), Object.keys(FAILED_CHECKS).sort(), 'one row of samples per failed check')
  for (const name of Object.keys(FAILED_CHECKS) as FailedCheckName[]) {
    for (const [i, facts] of (CHECK_SAMPLES[name] as readonly unknown[]).entries()) {
      const where = `${name} #${i}`
      const said = (FAILED_CHECKS[name].says as (facts: unknown) => CheckSaid)(facts)
      for (const part of ['subject', 'expected', 'got'] as const) wellFormed(t, said[part], `${where} ${part}`)
      const e = (checkFailure as (name: FailedCheckName, facts: unknown) => VerificationError)(name, facts)
      t.ok(e instanceof VerificationError, `${where}: a VerificationError`)
      t.equal(e instanceof ProofError, name === 'PROOF_NOT_LINKED', `${where}: a ProofError only for a trie proof`)
      t.same(
        { code: e.code, subject: e.subject, expected: e.expected, got: e.got },
        { code: said.check, subject: said.subject, expected: said.expected, got: said.got },
      )
      t.equal(e.message, `${said.check}: ${said.subject}: expected ${said.expected}, got ${said.got}`, `${where}: the one-line message`)
      const client = refusal('ANSWER_FAILED_CHECK', said)
      wellFormed(t, client.message, `${where} as ANSWER_UNVERIFIED`)
      t.match(client.message, SAYS_WHAT_TO_DO, `${where} as ANSWER_UNVERIFIED: says what to do`)
    }
  }
})

t.test("every reason of ANSWER_UNVERIFIED's `what` reads in its message", async (t) => {
  t.same(Object.keys(UNVERIFIED_SAMPLES).sort(), Object.keys(UNVERIFIED_BECAUSE).sort(), 'one sample per reason')
  for (const name of Object.keys(UNVERIFIED_BECAUSE) as (keyof typeof UNVERIFIED_BECAUSE)[]) {
    const what = (UNVERIFIED_BECAUSE[name] as (facts: unknown) => string)(UNVERIFIED_SAMPLES[name])
    wellFormed(t, what, name)
    wellFormed(t, refusal('ANSWER_UNVERIFIED', { what }).message, `${name} as ANSWER_UNVERIFIED`)
  }
  t.equal(UNVERIFIED_BECAUSE.ANSWERS_FAILED({ failures: 1, check: 'CODE_HASH', subject: 'x' }), '1 node answer failed CODE_HASH (x)', 'one answer: singular')
})

t.test("every reason a node was passed over reads in ANSWER_UNVERIFIED's message", async (t) => {
  t.same(Object.keys(PASSED_OVER_SAMPLES).sort(), Object.keys(PASSED_OVER_BECAUSE).sort(), 'one row of samples per reason')
  for (const name of Object.keys(PASSED_OVER_BECAUSE) as (keyof typeof PASSED_OVER_BECAUSE)[]) {
    for (const [i, facts] of (PASSED_OVER_SAMPLES[name] as readonly unknown[]).entries()) {
      const why = (PASSED_OVER_BECAUSE[name] as (facts: unknown) => string)(facts)
      wellFormed(t, why, `${name} #${i}`)
      const what = UNVERIFIED_BECAUSE.NO_ANSWER_OF_THE_BLOCK({ why })
      wellFormed(t, refusal('ANSWER_UNVERIFIED', { what }).message, `${name} #${i} as ANSWER_UNVERIFIED`)
    }
  }
})

t.test('every situation of REFUSED_BECAUSE has its sample, and completes the message of its group', async (t) => {
  t.same(Object.keys(REFUSED_SAMPLES).sort(), Object.keys(REFUSED_BECAUSE).sort(), 'one row per group')
  for (const group of Object.keys(REFUSED_BECAUSE) as RefusedGroup[]) {
    t.same(Object.keys(REFUSED_SAMPLES[group]).sort(), Object.keys(REFUSED_BECAUSE[group]).sort(), `${group}: one sample per situation`)
    t.same(SAMPLES[group], refusedWhats(group), `${group}: its samples in SAMPLES are these situations' words`)
  }
  t.equal(
    refusal('RUN_READS_TOO_MUCH', { what: REFUSED_BECAUSE.RUN_READS_TOO_MUCH.ROUNDS({ rounds: 4 }) }).message,
    'This call reads more state than this gateway proves for one verified call: it read state beyond 4 rounds of proofs; send an access list of what it reads (eth_createAccessList)',
    'the words after the colon',
  )
})

t.test('every close reason has its code, its cause and words that fit a close frame', async (t) => {
  t.same(Object.keys(CLOSE_SAMPLES).sort(), Object.keys(CLOSE_REASONS).sort(), 'one row of samples per close reason')
  const codes: readonly number[] = Object.values(CLOSE_CODES)
  for (const name of Object.keys(CLOSE_REASONS) as CloseReasonName[]) {
    for (const [i, facts] of (CLOSE_SAMPLES[name] as readonly unknown[]).entries()) {
      const where = `${name} #${i}`
      const c = (closing as (name: CloseReasonName, facts: unknown) => ReturnType<typeof closing>)(name, facts)
      t.ok(codes.includes(c.code), `${where}: close code ${c.code} is one of CLOSE_CODES`)
      t.equal(c.code, CLOSE_REASONS[name].close, `${where}: the entry's code`)
      t.equal(c.cause, CLOSE_REASONS[name].cause, `${where}: the entry's cause`)
      wellFormed(t, c.reason, where)
      // The gateway's own reasons are whole in a close frame; a refusal's is cut there (WsSession.end).
      if (name !== 'ACCESS_WITHDRAWN') t.ok(Buffer.byteLength(c.reason) <= 123, `${where}: at most 123 bytes (RFC 6455, 5.5)`)
    }
  }
  t.equal(closing('ACCESS_WITHDRAWN', { refusal: refusal('KEY_REVOKED', {}) }).reason, refusal('KEY_REVOKED', {}).message, "the refusal's words")
})
