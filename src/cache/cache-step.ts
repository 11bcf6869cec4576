import type { NodeKind } from '../core/node-kind.js'
import { paramsJson } from '../rpc/params-json.js'
import { Answer } from '../upstream/answer.js'
import { spliceId } from '../upstream/json-rpc-wire.js'
import { cacheRuleFor, isFinal, mayBeFinal, type CacheRule } from './cache-rules.js'
import type { ImmutableCache } from './immutable-cache.js'

/** What the cache step reads of a call. */
export interface CacheableCall {
  readonly network: string
  readonly kind: NodeKind
  readonly method: string
  readonly params: unknown
  /** The client's id as JSON text. */
  readonly idJson: string
}

/** How the cache step asks upstream: the call shared with identical ones in flight (`send` runs once for all of them). */
export type ShareCall<C extends CacheableCall> = (c: C, send: () => Promise<Answer>) => Promise<Answer>

/**
 * The key of a call in the cache, within its network and generation. By node kind too: what a full
 * node answered is not served as an archive node's answer. The one way the key is written, for the
 * synchronous lookup of a batch and the call that stores.
 */
export function cacheKey(kind: NodeKind, method: string, params: unknown): string {
  return `${kind}\0${method}\0${paramsJson(params)}`
}

/**
 * Answers that can no longer change, served from the LMDB cache (src/cache/immutable-cache.ts):
 * a call whose answer is final and stored is answered at once; one that may be final is asked
 * upstream and stored when its answer is final; the others go upstream as they are.
 * @example
 * const step = new CacheStep(cache, (network) => finality.finalized(network))
 * const answer = await step.call(c, share, send) // answer.cache: 'hit' | 'miss' | undefined
 */
export class CacheStep {
  constructor(
    private readonly cache: ImmutableCache | undefined,
    /** The finalized block of a network (undefined until known: nothing is cached as final). */
    private readonly finalized: ((network: string) => number | undefined) | undefined,
  ) {}

  /** Whether the cache may answer this method and params (a cache is configured and the call has a rule). */
  mayAnswer(method: string, params: unknown): boolean {
    return this.cache !== undefined && cacheRuleFor(method, params) !== undefined
  }

  /**
   * The cached answer of a call when it is final and stored, at once (synchronous), or undefined.
   * A batch serves its cached calls with this before anything goes upstream: the async path per
   * call cost more than the lookup itself.
   */
  now(c: CacheableCall): Answer | undefined {
    const cache = this.cache
    if (cache === undefined) return undefined
    const rule = cacheRuleFor(c.method, c.params)
    if (rule === undefined || !mayBeFinal(rule, this.finalized?.(c.network))) return undefined
    const hit = cache.get(c.network, cache.generation(c.network), cacheKey(c.kind, c.method, c.params))
    return hit === undefined ? undefined : cacheHit(hit, c.idJson, c.kind)
  }

  /**
   * From the cache when final and stored; else shared in flight, and stored when final. Not async
   * for the calls no rule caches (most: `latest`, eth_blockNumber): an async function that returns
   * the promise of `share` makes every such call wait two more turns of the microtask queue.
   */
  call<C extends CacheableCall>(c: C, share: ShareCall<C>, send: () => Promise<Answer>): Promise<Answer> {
    const cache = this.cache
    const rule = cache === undefined ? undefined : cacheRuleFor(c.method, c.params)
    if (cache === undefined || rule === undefined) return share(c, send)
    return this.#cached(cache, rule, c, share, send)
  }

  /** A call a rule may cache: the cache's answer when final and stored, else asked and stored when final. */
  async #cached<C extends CacheableCall>(cache: ImmutableCache, rule: CacheRule, c: C, share: ShareCall<C>, send: () => Promise<Answer>): Promise<Answer> {
    // Cacheable in time but not final yet (above the finalized block): asked upstream, never stored.
    if (!mayBeFinal(rule, this.finalized?.(c.network))) return missed(await share(c, send))
    const generation = cache.generation(c.network)
    const key = cacheKey(c.kind, c.method, c.params)
    const hit = cache.get(c.network, generation, key)
    if (hit !== undefined) return cacheHit(hit, c.idJson, c.kind)
    const reply = await share(c, async () => {
      const r = await send()
      if (!r.isError) this.#store(cache, c.network, rule, generation, key, r.text)
      return r
    })
    return missed(reply)
  }

  /** Store an answer if it is final now, and no reorg dropped the generation it was read under. */
  #store(cache: ImmutableCache, network: string, rule: CacheRule, generation: number, key: string, body: string): void {
    let result: unknown
    if (rule.final === 'result') {
      try {
        result = (JSON.parse(body) as { result?: unknown }).result
      } catch {
        return
      }
    } else {
      // Only presence matters here: a null answer (no such block) is short, so look only there.
      result = body.length < 200 && /"result"\s*:\s*null/.test(body) ? null : true
    }
    if (!isFinal(rule, result, this.finalized?.(network))) return
    if (cache.generation(network) !== generation) return
    cache.put(network, generation, key, body)
  }
}

/** A stored answer for this client: the cache's text with its id. */
function cacheHit(text: string, idJson: string, kind: NodeKind): Answer {
  const a = Answer.ofText(spliceId(text, idJson), false, 'cache', kind)
  a.cache = 'hit'
  return a
}

/** An answer the cache could keep but did not have (the X-Tollgate-Cache: miss header). */
function missed(answer: Answer): Answer {
  answer.cache = 'miss'
  return answer
}
