import type { CheckSaid, VerifyCheck } from './verify-check.js'

/** A check that needs no facts beyond its name. */
type NoFacts = Record<never, never>

/** A failed check's words: the place in the answer, what was required, what came. */
const said = (check: VerifyCheck, subject: string, expected: string, got: string): CheckSaid => ({ check, subject, expected, got })

/** A failed check in one line: a VerificationError's message (operators' logs). */
export const failedCheckText = (s: CheckSaid) => `${s.check}: ${s.subject}: expected ${s.expected}, got ${s.got}`

/**
 * What a failed check of a node's answer says (src/proofs, src/verified-reads): its check, the
 * place in the answer (`subject`, a field path such as `receipt 3 log 1 topic 0`, a fact), what the
 * trusted side requires and what the answer gave. Operators read it in logs and metrics, and a
 * client in ANSWER_UNVERIFIED, so its words are written here; checkFailure (proofs/check-failure.ts)
 * makes the VerificationError.
 * @example FAILED_CHECKS.HEADER_HASH_FROM_FIELDS.says({ block: '0x10', claimed: '0xab…', computed: '0xcd…' }).got // '0xcd… from its fields'
 */
export const FAILED_CHECKS = {
  // Blocks (block-body.ts, block-places.ts, header.ts): a list, a place or the header itself.
  ROOT_FROM_ANSWER: {
    says: (f: { check: 'TRANSACTIONS_ROOT' | 'WITHDRAWALS_ROOT' | 'RECEIPTS_ROOT'; block: string; root: string; computed: string }) =>
      said(f.check, `block ${f.block}`, `${f.root} (the header's)`, `${f.computed} from the answer`),
  },
  WITHDRAWALS_WITHOUT_ROOT: {
    says: (f: { block: string; withdrawals: number }) =>
      said('WITHDRAWALS_ROOT', `block ${f.block}`, 'no withdrawals (no withdrawalsRoot)', `${f.withdrawals}`),
  },
  WITHDRAWAL_FIELDS: {
    says: (f: { index: number; withdrawal: unknown }) =>
      said('WITHDRAWALS_ROOT', `withdrawal ${f.index}`, 'index, validatorIndex, address, amount as hex', JSON.stringify(f.withdrawal)),
  },
  PLACE_DIFFERS: {
    says: (f: { check: 'TRANSACTION_PLACE' | 'RECEIPT_PLACE'; field: string; expected: string | bigint | null; got: unknown }) =>
      said(f.check, f.field, String(f.expected), String(f.got)),
  },
  RECEIPTS_NOT_ONE_PER_TRANSACTION: {
    says: (f: { block: string; transactions: number; receipts: number }) =>
      said('RECEIPT_PLACE', `block ${f.block} receipts`, `${f.transactions} (one per transaction)`, `${f.receipts}`),
  },
  LOG_REMOVED: { says: (f: { log: string }) => said('RECEIPT_PLACE', `${f.log} removed`, 'false (a log of a canonical block)', 'true') },
  FORK_FIELD_WITHOUT_EARLIER: {
    says: (f: { field: string; missing: string }) =>
      said('HEADER_FIELDS', f.field, `${f.missing} present before it (fields of earlier forks first)`, `${f.missing} missing`),
  },
  HEADER_HASH_FROM_FIELDS: {
    says: (f: { block: string; claimed: string; computed: string }) => said('HEADER_HASH', `block ${f.block}`, f.claimed, `${f.computed} from its fields`),
  },

  // Fields (hex-fields.ts, receipt-encoding.ts): what a JSON-RPC field must be to be encoded.
  NOT_A_QUANTITY: { says: (f: { check: VerifyCheck; field: string; value: unknown }) => said(f.check, f.field, 'a hex quantity', JSON.stringify(f.value)) },
  NOT_HEX_DATA: { says: (f: { check: VerifyCheck; field: string; value: unknown }) => said(f.check, f.field, 'hex data', JSON.stringify(f.value)) },
  DATA_LENGTH: {
    says: (f: { check: VerifyCheck; field: string; length: number; bytes: number }) => said(f.check, f.field, `${f.length} bytes`, `${f.bytes} bytes`),
  },
  RECEIPT_TYPE_TOO_HIGH: { says: (f: { field: string; type: string }) => said('RECEIPTS_ROOT', f.field, 'a transaction type below 0x80', f.type) },

  // State (state-proof.ts, state-answers.ts): an account, its storage and its code against the state root.
  PROOF_NOT_LINKED: {
    says: (f: { check: 'ACCOUNT_PROOF' | 'STORAGE_PROOF'; subject: string; root: string }) =>
      said(f.check, f.subject, `proof nodes linked from root ${f.root}`, 'nodes that do not lead to the key from that root'),
  },
  PROOF_OF_ANOTHER_ADDRESS: { says: (f: { asked: string; proven: string }) => said('ACCOUNT_PROOF', 'address', f.asked, f.proven) },
  ACCOUNT_LEAF_NOT_ACCOUNT: {
    says: (f: { address: string; leaf: string }) => said('ACCOUNT_PROOF', `${f.address} leaf`, 'an account [nonce, balance, storageRoot, codeHash]', f.leaf),
  },
  ACCOUNT_FIELD_DIFFERS: {
    says: (f: { address: string; field: string; proven: string; claimed: string }) => said('ACCOUNT_PROOF', `${f.address} ${f.field}`, f.proven, f.claimed),
  },
  STORAGE_KEYS_DIFFER: {
    says: (f: { address: string; asked: readonly string[]; answered: readonly string[] }) =>
      said('STORAGE_PROOF', `${f.address} storage keys`, f.asked.join(','), f.answered.join(',')),
  },
  STORAGE_VALUE_DIFFERS: { says: (f: { slot: string; proven: string; claimed: string }) => said('STORAGE_PROOF', f.slot, f.proven, f.claimed) },
  STORAGE_LEAF_NOT_BYTES: { says: (f: { slot: string; leaf: string }) => said('STORAGE_PROOF', `${f.slot} leaf`, 'rlp of a byte string', f.leaf) },
  CODE_HASH_DIFFERS: {
    says: (f: { address: string; codeHash: string; hash: string }) => said('CODE_HASH', `${f.address} code`, f.codeHash, `${f.hash} (keccak of the code)`),
  },

  // Transactions (transaction-encoding.ts): the fields a hash and a signature are made of.
  NUMBER_TOO_LARGE: {
    says: (f: { field: string; value: bigint }) => said('TRANSACTION_ENCODING', f.field, 'at most 2^53-1 (the encoder takes a number)', String(f.value)),
  },
  TRANSACTION_TYPE_UNKNOWN: {
    says: (f: { hash: string; known: readonly string[]; type: unknown }) =>
      said('TRANSACTION_ENCODING', `transaction ${f.hash} type`, f.known.join(' or '), String(f.type)),
  },
  CHAIN_ID_NOT_V_S: {
    says: (f: { hash: string; ofV: bigint; chainId: unknown }) =>
      said('TRANSACTION_ENCODING', `transaction ${f.hash} chainId`, `${f.ofV} (its v's)`, String(f.chainId)),
  },
  Y_PARITY_NOT_A_BIT: {
    says: (f: { hash: string; yParity: number }) => said('TRANSACTION_ENCODING', `transaction ${f.hash} yParity`, '0 or 1', String(f.yParity)),
  },
  V_NOT_Y_PARITY: {
    says: (f: { hash: string; yParity: number; v: unknown }) =>
      said('TRANSACTION_ENCODING', `transaction ${f.hash} v`, `${f.yParity} (its yParity)`, String(f.v)),
  },
  TRANSACTION_NOT_ENCODABLE: {
    says: (f: { hash: string; why: string }) => said('TRANSACTION_ENCODING', `transaction ${f.hash}`, 'fields a valid transaction has', f.why),
  },
  TRANSACTION_HASH_FROM_FIELDS: {
    says: (f: { hash: string; claimed: string; computed: string }) =>
      said('TRANSACTION_HASH', `transaction ${f.hash}`, f.claimed, `${f.computed} from its fields`),
  },
  SIGNATURE_RECOVERS_NOBODY: {
    says: (f: { hash: string }) => said('TRANSACTION_SENDER', `transaction ${f.hash} signature`, 'a signature that recovers to a sender', 'none'),
  },
  SENDER_NOT_SIGNER: {
    says: (f: { hash: string; signer: string; from: unknown }) =>
      said('TRANSACTION_SENDER', `transaction ${f.hash} from`, `${f.signer} (its signer)`, String(f.from)),
  },

  // The walk to the configured checkpoint (verified-reads/checkpoint-chain.ts): an operator's setting, a client's retry.
  NOT_YET_LINKED: {
    says: (f: { block: number; checkpoint: number; blocks: number }) =>
      said(
        'HEADER_AGREEMENT',
        `block ${f.block}`,
        `a header linked to the configured checkpoint (block ${f.checkpoint})`,
        `not yet: the gateway is linking ${f.blocks} blocks to it in the background; retry in a few seconds`,
      ),
  },
  TOO_FAR_FROM_CHECKPOINT: {
    says: (f: { maxBlocks: number; checkpoint: number; blocks: number }) =>
      said(
        'HEADER_AGREEMENT',
        'the block asked for',
        `a header at most ${f.maxBlocks} blocks from one linked to the configured checkpoint (block ${f.checkpoint})`,
        `${f.blocks} blocks away: configure a newer verifyCheckpoint`,
      ),
  },
  OFF_THE_CHECKPOINT_CHAIN: {
    says: (f: { block: number; linked: string; got: string | undefined }) =>
      said('HEADER_AGREEMENT', `block ${f.block}`, `${f.linked} (linked to the configured checkpoint)`, f.got ?? 'no node has a header that links'),
  },

  // Headers (verified-reads/trusted-headers.ts, block-hashes.ts, log-reads.ts): agreement of the nodes, links between headers.
  NO_HEADER_REPORTED: { says: (f: { tag: string }) => said('HEADER_AGREEMENT', `the ${f.tag} block`, 'a header that nodes report', 'none') },
  NO_QUORUM: {
    says: (f: { block: string; quorum: number; configured: number; healthy: number }) =>
      said('HEADER_AGREEMENT', `block ${f.block}`, `${f.quorum} of the ${f.configured} configured nodes reporting one header (${f.healthy} healthy)`, 'fewer'),
  },
  HEADER_NOT_THE_NAMED: { says: (f: { named: string; hash: string }) => said('HEADER_HASH', 'block hash', f.named, f.hash) },
  NAMED_BLOCK_NOT_AGREED: {
    says: (f: { hash: string; number: number; agreed: string | null }) =>
      said(
        'HEADER_AGREEMENT',
        `block ${f.hash} (named by hash)`,
        f.agreed === null
          ? `a block the nodes agree on at its number (${f.number}): they agree there is none yet`
          : `the block the nodes agree on at its number (${f.number}): ${f.agreed}`,
        'another block, not on the chain the nodes agree on',
      ),
  },
  NOT_LINKED_TO_TRUSTED_BLOCK: {
    says: (f: { block: number; expected: string; trusted: string }) =>
      said('HEADER_AGREEMENT', `block ${f.block}`, `${f.expected} (linked to the trusted block ${f.trusted})`, 'no node has a header that links'),
  },
  // `none`: the node gave no header, or no answer to the batch; log-reads.ts counts a node only for a header that does not link.
  LINKED_HEADER_MISSING: {
    says: (f: { block: number; expected: string; none: 'no header' | 'no answer' }) => said('HEADER_HASH', `block ${f.block}`, f.expected, f.none),
  },
  PARENT_HASH_DIFFERS: {
    says: (f: { block: number; expected: string; hash: string }) => said('HEADER_HASH', `block ${f.block} (parent of ${f.block + 1})`, f.expected, f.hash),
  },

  // Block reads (verified-reads/block-reads.ts): a block, its receipts, a transaction or receipt in it.
  NO_RESULT: {
    says: (f: { check: 'HEADER_HASH' | 'RECEIPTS_ROOT'; subject: string; answered: 'an error' | 'null' }) => said(f.check, f.subject, 'a result', f.answered),
  },
  BLOCK_NOT_THE_TRUSTED: { says: (f: { trusted: string; hash: string }) => said('HEADER_HASH', 'block', f.trusted, f.hash) },
  TRANSACTIONS_NOT_OBJECTS: { says: (_: NoFacts) => said('TRANSACTIONS_ROOT', 'transactions', 'full objects', 'hashes') },
  RECEIPTS_NOT_A_LIST: { says: (f: { block: string; type: string }) => said('RECEIPTS_ROOT', `receipts of ${f.block}`, 'a list', f.type) },
  RECEIPT_BLOCK_HASH_INVALID: { says: (f: { blockHash: unknown }) => said('RECEIPT_PLACE', 'receipt blockHash', 'a block hash', String(f.blockHash)) },
  BLOCK_NOT_CANONICAL: {
    says: (f: { of: 'receipt' | 'transaction'; blockHash: unknown }) =>
      said(f.of === 'receipt' ? 'RECEIPT_PLACE' : 'TRANSACTION_PLACE', `${f.of} blockHash`, 'a canonical block', String(f.blockHash)),
  },
  NOT_IN_ITS_BLOCK: {
    says: (f: { of: 'receipt' | 'transaction'; hash: unknown; block: string }) =>
      f.of === 'receipt'
        ? said('RECEIPTS_ROOT', `receipt of ${String(f.hash)}`, `in block ${f.block}`, 'absent')
        : said('TRANSACTIONS_ROOT', `transaction ${String(f.hash)}`, `in block ${f.block}`, 'absent'),
  },
  NO_PROOF: { says: (f: { address: string }) => said('ACCOUNT_PROOF', f.address, 'an eth_getProof result', 'none') },
  // first-passing.ts: an answer that does not parse fails the check the call is for.
  NOT_JSON: { says: (f: { check: VerifyCheck; method: string }) => said(f.check, f.method, 'JSON', 'not JSON') },

  // Logs (verified-reads/log-reads.ts): the node's logs against those of the proven receipts.
  LOGS_NOT_A_LIST: { says: (f: { type: string }) => said('LOGS_COMPLETE', 'eth_getLogs', 'a list of logs', f.type) },
  LOG_NOT_PROVEN: {
    says: (f: { index: number; proven: string | undefined; log: string }) =>
      said('LOGS_COMPLETE', `log ${f.index}`, f.proven ?? 'no further log (from proven receipts)', f.log),
  },
  LOGS_LEFT_OUT: {
    says: (f: { everyClient: number; missing: number }) =>
      said('LOGS_COMPLETE', 'eth_getLogs', `${f.everyClient} logs every client's rule matches (from proven receipts)`, `${f.missing} of them left out`),
  },
  LOGS_NOT_CHECKABLE: {
    says: (_: NoFacts) =>
      said(
        'LOGS_COMPLETE',
        'eth_getLogs',
        'logs of blocks the nodes agree on',
        'logs of a range this gateway cannot check (pending, or blocks no node agreed on)',
      ),
  },

  // Calls and estimates (verified-reads/call-reads.ts, estimate-reads.ts): the node's answer against a run on proven state.
  CALL_RESULT_DIFFERS: {
    says: (f: { ran: { end: 'returned' | 'reverted' | 'failed'; returned: string; error?: string }; answered: { error: unknown } | { result: unknown } }) =>
      said(
        'CALL_RESULT',
        'eth_call',
        f.ran.end === 'failed'
          ? `an error (${f.ran.error}, run on proven state)`
          : `${f.ran.end === 'reverted' ? 'a revert with' : 'the return data'} ${f.ran.returned} (run on proven state)`,
        'error' in f.answered ? `an error with ${String(f.answered.error)}` : String(f.answered.result),
      ),
  },
  CALL_NOT_CHECKABLE: {
    says: (_: NoFacts) => said('CALL_RESULT', 'eth_call', 'a call at a block the nodes agree on', 'pending, or a block no node agreed on'),
  },
  ESTIMATE_NOT_A_QUANTITY: { says: (f: { result: unknown }) => said('GAS_ESTIMATE', 'eth_estimateGas', 'a quantity', String(f.result)) },
  ESTIMATE_ABOVE_CAP: { says: (f: { cap: bigint; estimate: string }) => said('GAS_ESTIMATE', 'eth_estimateGas', `at most the gas cap ${f.cap}`, f.estimate) },
  ESTIMATE_TOO_LOW: {
    says: (f: { estimate: bigint }) =>
      said('GAS_ESTIMATE', 'eth_estimateGas', 'enough gas for the call (run on proven state)', `${f.estimate}, with which it fails`),
  },
  // 2%: estimate-reads.ts's SLACK_DIVISOR (50).
  ESTIMATE_TOO_HIGH: {
    says: (f: { estimate: bigint; works: bigint }) =>
      said('GAS_ESTIMATE', 'eth_estimateGas', 'at most 2% above the least gas that works (run on proven state)', `${f.estimate}, where ${f.works} works`),
  },
  ESTIMATE_NOT_CHECKABLE: {
    says: (_: NoFacts) =>
      said(
        'GAS_ESTIMATE',
        'eth_estimateGas',
        'an estimate at a block the nodes agree on',
        'pending, a block no node agreed on, or blob or authorization lists',
      ),
  },
} as const satisfies Record<string, { says: (facts: never) => CheckSaid }>

export type FailedCheckName = keyof typeof FAILED_CHECKS
export type FactsOfCheck<N extends FailedCheckName> = Parameters<(typeof FAILED_CHECKS)[N]['says']>[0]
