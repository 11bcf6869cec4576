import type { NodeKind } from '../core/node-kind.js'
import type { Answer } from '../upstream/answer.js'
import type { GetLogs } from './get-logs.js'

/** What the logs path asks of the caller. */
export interface LogsPathDeps {
  /** One eth_getLogs part with these params (through the cache and in-flight sharing, no heavy slot of its own). */
  fetch(params: unknown[], idJson: string): Promise<Answer>
  /** Another call of the node kind the eth_getLogs goes to, shared in flight (a tag's block). */
  ask(method: string, params: unknown[]): Promise<Answer>
}

/** An eth_getLogs on its way: its params, the client's id, its node kind, and its heavy slot if its key has a bound. */
export interface LogsCall {
  readonly params: unknown
  readonly idJson: string
  readonly kind: NodeKind
  readonly heavySlot: { run<T>(send: () => Promise<T>): Promise<T> } | undefined
}

/**
 * An eth_getLogs through GetLogs (tags resolved, a wide range split): one heavy slot for the whole
 * call, however many parts it is split in; its parts and tag lookups take none.
 * @example
 * const answer = await logsPath(logs, { params, idJson: '1', kind: 'full', heavySlot }, { fetch, ask })
 */
export function logsPath(logs: GetLogs, c: LogsCall, deps: LogsPathDeps): Promise<Answer> {
  const run = () => logs.call(c.params, c.idJson, c.kind, { fetch: deps.fetch, resolveTag: (tag) => blockOfTag(deps, tag) })
  return c.heavySlot === undefined ? run() : c.heavySlot.run(run)
}

/** A block tag's number now, asked of the node kind the call goes to; undefined when the node did not say. */
async function blockOfTag(deps: LogsPathDeps, tag: string): Promise<number | undefined> {
  try {
    if (tag === 'latest' || tag === 'pending') {
      const r = await deps.ask('eth_blockNumber', [])
      const m = /"result"\s*:\s*"(0x[0-9a-fA-F]+)"/.exec(r.text)
      return m ? parseInt(m[1], 16) : undefined
    }
    const r = await deps.ask('eth_getBlockByNumber', [tag, false])
    const number = (JSON.parse(r.text) as { result?: { number?: string } | null }).result?.number
    return typeof number === 'string' ? parseInt(number, 16) : undefined
  } catch {
    return undefined
  }
}
