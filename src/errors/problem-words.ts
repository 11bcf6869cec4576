import type { VerifyCheck } from './verify-check.js'

/**
 * The words of the problems a refusal names by kind (a plan's coverage gap, a contract rule, eth_subscribe's
 * params, why no node's answer passed): each kind's cases as a type, and the one function or table that says
 * them. MESSAGES (messages.ts) puts them in their messages; a call site names the case, never the words.
 */

/** A list for a message: the first few entries, and how many more. */
export const listed = (list: readonly string[]) => (list.length <= 5 ? list.join(', ') : `${list.slice(0, 5).join(', ')} and ${list.length - 5} more`)

/**
 * What a plan lacks on a network (plans/entitlements.ts coverageGap): the facts PLAN_DOES_NOT_COVER
 * says. `chosen`: the account's selected nodes on every network, so the client sees where it may go.
 */
export type CoverageGap =
  | { gap: 'no-plan' }
  | { gap: 'other-nodes'; plan: string; chosen: readonly { network: string; kind: string }[] }
  | { gap: 'none-chosen'; plan: string }
  | { gap: 'network'; plan: string }

export const coverageGapWords = (f: CoverageGap & { network: string }) => {
  switch (f.gap) {
    case 'no-plan':
      return 'the account has no active plan'
    case 'other-nodes':
      return `the ${f.plan} plan of this account covers ${f.chosen.map((n) => `${n.network} ${n.kind}`).join(', ')}, not ${f.network}`
    case 'none-chosen':
      return `the ${f.plan} plan has no nodes chosen yet; choose them in the dashboard's Plans section`
    case 'network':
      return `the ${f.plan} plan does not cover ${f.network}`
  }
}

/** Where a contract rule looks (key-rules.ts): in a method's params, or in a logs subscription's filter. */
export type RuleReads = { method: string } | { logsSubscription: true }
const reads = (r: RuleReads) => ('method' in r ? r.method : 'a logs subscription')
const member = (r: RuleReads, m: 'address' | 'to') => `${reads(r)}'s ${m === 'to' ? '`to`' : 'address'}`

/** Why a call does not meet a key's contract rule (key-rules.ts contractProblem): the facts KEY_CONTRACT_NOT_LISTED says. */
export type ContractProblem =
  | { problem: 'method-not-in-table'; method: string }
  | { problem: 'names-unchecked'; method: string }
  | { problem: 'no-transaction-object'; method: string }
  | { problem: 'creation-without-to'; method: string }
  | { problem: 'no-signed-transaction'; method: string }
  | { problem: 'transaction-undecodable'; method: string }
  | { problem: 'signed-creation'; method: string }
  | { problem: 'filter-without-address'; in: RuleReads }
  | { problem: 'address-missing'; in: RuleReads; member: 'address' | 'to' }
  | { problem: 'address-not-listed'; in: RuleReads; member: 'address' | 'to'; address: string }

export const contractProblemWords = (p: ContractProblem) => {
  switch (p.problem) {
    case 'method-not-in-table':
      return `${JSON.stringify(p.method.slice(0, 64))} is not in the method table, so what it names cannot be checked`
    case 'names-unchecked':
      return `${p.method} names addresses a contract rule cannot check (several calls, a sender, a range)`
    case 'no-transaction-object':
      return `${p.method} has no transaction object`
    case 'creation-without-to':
      return `${p.method} without \`to\` (a contract creation) reaches no listed contract`
    case 'no-signed-transaction':
      return `${p.method} has no signed transaction`
    case 'transaction-undecodable':
      return `${p.method}'s transaction could not be decoded, so its \`to\` cannot be checked`
    case 'signed-creation':
      return `${p.method}'s transaction creates a contract (no \`to\`)`
    case 'filter-without-address':
      return `${reads(p.in)} without \`address\` reads every contract's logs`
    case 'address-missing':
      return `${member(p.in, p.member)} is missing`
    case 'address-not-listed':
      return `${member(p.in, p.member)} ${JSON.stringify(p.address.slice(0, 66))} is not listed`
  }
}

/** Why eth_subscribe's params are refused (ws/subscription-request.ts): the facts SUBSCRIBE_PARAMS says. */
export type SubscribeProblem =
  | { problem: 'no-kind' }
  | { problem: 'unsupported-kind'; kind: string }
  | { problem: 'new-heads-options' }
  | { problem: 'pending-options' }
  | { problem: 'logs-filters-many' }
  | { problem: 'logs-filter-not-object' }
  | { problem: 'logs-past-blocks' }
  | { problem: 'logs-field-unknown'; field: string }
  | { problem: 'address-invalid'; value: unknown }
  | { problem: 'topics-not-array' }
  | { problem: 'topics-too-many' }
  | { problem: 'topic-invalid'; value: unknown }

const SUBSCRIPTION_KINDS = 'newHeads (also newBlockHeaders), logs or newPendingTransactions'

export const subscribeProblemWords = (p: SubscribeProblem) => {
  switch (p.problem) {
    case 'no-kind':
      return `eth_subscribe takes [kind, options?] where kind is ${SUBSCRIPTION_KINDS}`
    case 'unsupported-kind':
      return `unsupported subscription kind ${JSON.stringify(p.kind.slice(0, 40))}; use ${SUBSCRIPTION_KINDS}`
    case 'new-heads-options':
      return 'newHeads takes no options (or one options object)'
    case 'pending-options':
      return 'newPendingTransactions takes no options, or true for whole transactions'
    case 'logs-filters-many':
      return 'logs takes one filter object: { address?, topics? }'
    case 'logs-filter-not-object':
      return 'the logs filter must be an object: { address?, topics? }'
    case 'logs-past-blocks':
      return 'a logs subscription delivers logs from new blocks only (fromBlock "latest"); use eth_getLogs for past blocks'
    case 'logs-field-unknown':
      return `unknown logs filter field ${JSON.stringify(p.field.slice(0, 40))}; use address and topics`
    case 'address-invalid':
      return `invalid address ${JSON.stringify(p.value)} in the logs filter`
    case 'topics-not-array':
      return 'topics must be an array'
    case 'topics-too-many':
      return 'topics has at most 4 positions'
    case 'topic-invalid':
      return `invalid topic ${JSON.stringify(p.value)} in the logs filter`
  }
}

/** Why no node's answer passed, as ANSWER_UNVERIFIED says it: `what` names the check, never a node. */
export const unverified = (what: string) =>
  `No node's answer passed this gateway's check (${what}); retry (a node may be catching up), and report it if it persists`

/**
 * Why a verified read refused every answer (verified-reads/, AnswerUnverified's `what`): the words
 * ANSWER_UNVERIFIED puts in its parentheses, without node names.
 */
export const UNVERIFIED_BECAUSE = {
  ANSWERS_FAILED: (f: { failures: number; check: VerifyCheck; subject: string }) =>
    `${f.failures} node answer${f.failures === 1 ? '' : 's'} failed ${f.check} (${f.subject})`,
  RUN_FAILED: (f: { check: VerifyCheck; subject: string }) => `the run on proven state: ${f.check} (${f.subject})`,
  NO_ANSWER_OF_THE_BLOCK: (f: { why: string }) => `no node's answer was of the block asked (${f.why})`,
  BLOCK_NOT_CHECKABLE: (f: { method: string }) =>
    `a node answered ${f.method} for a block the nodes agree does not exist, or with a block parameter this gateway cannot check`,
} as const

/**
 * Why a node's answer was passed over for a read, neither checked nor counted (verified-reads/
 * PassOver's `why`): when no node is left, the last one is NO_ANSWER_OF_THE_BLOCK's `why`.
 */
export const PASSED_OVER_BECAUSE = {
  // With the node's error answer: every node's error is then the client's answer, and this the log's.
  NODE_ERRED: (f: { method: string }) => `${f.method}: an error`,
  NO_RECEIPT: (f: { transaction: string }) => `no receipt of ${f.transaction}`,
  // Asked by number (by-number.ts ofTrustedBlock), the node answered for its own block there.
  // Never which node (the client's words say what a node did): the operator's log names it.
  OTHER_BLOCK: (f: { number: number; hash: string | undefined; trusted: string }) => `a node's block ${f.number} is ${f.hash ?? 'none'}, not ${f.trusted}`,
} as const
