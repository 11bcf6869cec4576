import { ERRORS, errorResponseJson } from '../errors/registry.js'
import type { NodeKind } from '../core/node-kind.js'
import { resultArrayItems } from '../upstream/json-rpc-wire.js'
import { Answer } from '../upstream/answer.js'
import { chunkCount, hex, logsBounds, needsHead, planLogs, tagsToResolve, tooManyMessage, tooWideMessage, type GetLogsLimits } from './logs-range.js'

export interface GetLogsDeps {
  /** Send one eth_getLogs call (through the cache and the in-flight sharing). */
  fetch(params: unknown[], idJson: string): Promise<Answer>
  /** A tag's block number on the network now (latest, pending, safe, finalized); undefined if unknown. */
  resolveTag(tag: string): Promise<number | undefined>
}

/** Counters for /metrics. */
export interface GetLogsCounters {
  split: number
  chunks: number
  refused: number
}

/**
 * eth_getLogs for clients that ask for wide ranges: tags resolved against the node first, a range
 * wider than `chunkBlocks` split into chunks fetched `concurrency` at a time and merged in order
 * (the client gets what one call to the node would have given), a range over `maxRangeBlocks` or
 * a result over `maxLogs` refused with a message that names a range that would work.
 */
export class GetLogs {
  readonly counters: GetLogsCounters = { split: 0, chunks: 0, refused: 0 }

  constructor(private readonly limits: GetLogsLimits) {}

  /**
   * The node calls an eth_getLogs with these params will cost, as estimated when it is admitted
   * (see chunkCount): what its units are multiplied by.
   */
  chunksFor(params: unknown, head: number | undefined): number {
    return Array.isArray(params) && params.length === 1 ? chunkCount(params[0], head, this.limits) : 1
  }

  async call(params: unknown, idJson: string, kind: NodeKind, deps: GetLogsDeps): Promise<Answer> {
    const asIs = (from?: number) => this.#asIs(params, idJson, kind, deps, from)
    if (!Array.isArray(params) || params.length !== 1) return asIs()
    const bounds = logsBounds(params[0])
    if (bounds === undefined) return asIs()
    const resolved = new Map<string, number>()
    for (const tag of tagsToResolve(bounds)) {
      const n = await deps.resolveTag(tag)
      if (n === undefined) return asIs()
      resolved.set(tag, n)
    }
    if (needsHead(bounds, this.limits.chunkBlocks) && !resolved.has('latest')) {
      // Only to measure the range: without the head it is measured as written, never let through unmeasured.
      const head = await deps.resolveTag('latest')
      if (head !== undefined) resolved.set('latest', head)
    }
    const plan = planLogs(bounds, resolved, this.limits)
    switch (plan.serve) {
      case 'as-is':
        return asIs(plan.from)
      case 'too-wide':
        this.counters.refused++
        return refusal(idJson, kind, 'LOGS_RANGE_TOO_WIDE', tooWideMessage(plan, this.limits.maxRangeBlocks))
      case 'split':
        return this.#split(params[0] as Record<string, unknown>, plan.from, plan.chunks, idJson, kind, deps)
    }
  }

  /** The call as the client sent it; only the log count is checked. */
  async #asIs(params: unknown, idJson: string, kind: NodeKind, deps: GetLogsDeps, from: number | undefined): Promise<Answer> {
    const reply = await deps.fetch(params as unknown[], idJson)
    if (reply.isError) return reply
    const items = resultArrayItems(reply.text)
    if (items === undefined || items.length <= this.limits.maxLogs) return reply
    this.counters.refused++
    const cut = blockOfItem(reply.text, items[this.limits.maxLogs])
    const first = from ?? blockOfItem(reply.text, items[0])
    return refusal(idJson, kind, 'LOGS_TOO_MANY', tooManyMessage(first, cut, this.limits.maxLogs))
  }

  async #split(
    filter: Record<string, unknown>,
    from: number,
    chunks: ReadonlyArray<readonly [number, number]>,
    idJson: string,
    kind: NodeKind,
    deps: GetLogsDeps,
  ): Promise<Answer> {
    this.counters.split++
    const replies: Array<{ reply: Answer; items: Array<{ start: number; end: number }> | undefined } | undefined> = new Array(chunks.length)
    let next = 0
    let stop = false
    let thrown: { index: number; err: unknown } | undefined
    // The logs of the chunks answered so far from the first one on: past maxLogs, the rest is not asked.
    let prefix = 0
    let prefixLogs = 0
    const worker = async (): Promise<void> => {
      while (!stop && next < chunks.length) {
        const index = next++
        const [a, b] = chunks[index]
        this.counters.chunks++
        try {
          const reply = await deps.fetch([{ ...filter, fromBlock: hex(a), toBlock: hex(b) }], idJson)
          const items = reply.isError ? undefined : resultArrayItems(reply.text)
          replies[index] = { reply, items }
          if (reply.isError || items === undefined) stop = true
        } catch (err) {
          if (thrown === undefined || index < thrown.index) thrown = { index, err }
          stop = true
        }
        while (prefix < chunks.length && replies[prefix] !== undefined) prefixLogs += replies[prefix++]!.items?.length ?? 0
        if (prefixLogs > this.limits.maxLogs) stop = true
      }
    }
    await Promise.all(Array.from({ length: Math.min(this.limits.concurrency, chunks.length) }, worker))

    // Chunks were started in order, so the answered ones are a prefix (up to a thrown failure).
    const parts: string[] = []
    let logs = 0
    let hits = 0
    let cached = 0
    for (let i = 0; i < chunks.length; i++) {
      const r = replies[i]
      if (r === undefined) {
        if (thrown !== undefined) throw thrown.err
        break
      }
      if (r.reply.isError || r.items === undefined) return r.reply // the node's own answer, unchanged
      if (logs + r.items.length > this.limits.maxLogs) {
        this.counters.refused++
        const cut = blockOfItem(r.reply.text, r.items[this.limits.maxLogs - logs])
        return refusal(idJson, kind, 'LOGS_TOO_MANY', tooManyMessage(from, cut, this.limits.maxLogs))
      }
      logs += r.items.length
      if (r.reply.cache === 'hit') hits++
      if (r.reply.cache !== undefined) cached++
      if (r.items.length > 0) parts.push(r.reply.text.slice(r.items[0].start, r.items[r.items.length - 1].end))
    }
    if (thrown !== undefined) throw thrown.err
    const first = replies[0]!.reply
    const merged = Answer.ofText(`{"jsonrpc":"2.0","id":${idJson},"result":[${parts.join(',')}]}`, false, first.node, first.kind)
    merged.cache = cached === 0 ? undefined : hits === chunks.length ? 'hit' : 'miss'
    return merged
  }
}

function refusal(idJson: string, kind: NodeKind, code: 'LOGS_RANGE_TOO_WIDE' | 'LOGS_TOO_MANY', message: string): Answer {
  // A JSON-RPC error in a 200, as a node's refusal would be.
  return Answer.gatewayError(errorResponseJson(idJson, ERRORS[code].rpc, message), 200, kind)
}

/** The block number of one log of a result (parsed alone: one small object). */
function blockOfItem(body: string, item: { start: number; end: number }): number {
  const log = JSON.parse(body.slice(item.start, item.end)) as { blockNumber?: string }
  return typeof log.blockNumber === 'string' ? parseInt(log.blockNumber, 16) : 0
}
