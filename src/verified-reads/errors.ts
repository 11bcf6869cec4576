import type { Answer } from '../upstream/answer.js'
/**
 * A verified read needs of the nodes what none of them serves (named in `what`, words of
 * REFUSED_BECAUSE.NODES_LACK): the client gets VERIFY_NODES_LACK, which names it. No node is counted as failing a check for it.
 */
export class NodesLack extends Error {
  override name = 'NodesLack'
  constructor(readonly what: string) {
    super(what)
  }
}

/** A run of the gateway's EVM still going when its wall-clock budget (evm.timeoutMs) was spent: it was stopped. */
export class EvmRunTimeout extends Error {
  override name = 'EvmRunTimeout'
  constructor(
    readonly timeoutMs: number,
    /** The gas the run was given: what it may have used when it was stopped. */
    readonly gas: bigint,
  ) {
    super(`the EVM run did not end within ${timeoutMs} ms`)
  }
}

/**
 * No node's answer passed the check: the client gets ANSWER_UNVERIFIED naming the last check that
 * failed (never an unchecked answer).
 */
export class AnswerUnverified extends Error {
  override name = 'AnswerUnverified'
  /** In words, without node names: `3 node answers failed ACCOUNT_PROOF (0xab… balance)`. */
  readonly what: string
  constructor(what: string, options?: { cause?: unknown }) {
    super(what, options)
    this.what = what
  }
}

/**
 * A node's answer that is no lie and yet nothing to check: an error (the node lacks the method,
 * the state or the block's form the check asked in), or an answer of another block than the one
 * asked (a node on another branch after a reorg, asked by number). The node is passed over for
 * this call and not counted: a node is a liar only against a proof. `why`: PASSED_OVER_BECAUSE.
 */
export class PassOver extends Error {
  override name = 'PassOver'
  constructor(
    readonly why: string,
    /** The node's error answer, when that is why: the client's answer when every node gives one. */
    readonly nodeError?: Answer,
  ) {
    super(why)
  }
}

/**
 * Every node asked gave its error (PassOver with an answer) and none gave an answer to check: the
 * node's error is the client's answer, as an unverified network answers it (marked nowhere as verified).
 */
export class NodeErrorAnswer extends Error {
  override name = 'NodeErrorAnswer'
  constructor(readonly answer: Answer) {
    super('a node answered with an error')
  }
}

/**
 * A range a verified eth_getLogs will not prove: too many blocks or candidate blocks. The client
 * gets VERIFY_RANGE_TOO_WIDE, which says how to narrow it (`what`: REFUSED_BECAUSE.LOGS_RANGE_TOO_WIDE).
 */
export class LogsRangeTooWide extends Error {
  override name = 'LogsRangeTooWide'
  constructor(readonly what: string) {
    super(what)
  }
}

/**
 * A verified call that needs more than this gateway proves or runs for one call: its own rule, not
 * a node's fault (no node is counted). `what` says what the client can do: REFUSED_BECAUSE.RUN_GAS_CAPPED
 * for 'gas', RUN_READS_TOO_MUCH for 'state'.
 */
export class RunRefused extends Error {
  override name = 'RunRefused'
  constructor(
    readonly why: 'state' | 'gas',
    readonly what: string,
  ) {
    super(what)
  }
}

/**
 * A verified eth_getProof naming more storage slots than MAX_PROOF_SLOTS: the client gets
 * VERIFY_PROOF_TOO_WIDE, which says to split the slots into several calls (`what`: REFUSED_BECAUSE.PROOF_TOO_WIDE).
 * No node is asked.
 */
export class ProofTooWide extends Error {
  override name = 'ProofTooWide'
  constructor(readonly what: string) {
    super(what)
  }
}
