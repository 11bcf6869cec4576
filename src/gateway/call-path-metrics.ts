import type { Registry } from 'prom-client'
import { scraped, scrapedValue, type Emit } from '../metrics/scraped.js'
import type { Upstreams, UpstreamNodeStats } from '../upstream/upstreams.js'
import type { CapacityCounters } from '../upstream/node-capacity.js'
import type { ImmutableCache } from '../cache/immutable-cache.js'
import type { FinalityTracker } from '../cache/finality.js'
import type { UpstreamCaller } from './upstream-caller.js'
import type { HeavyCalls } from './heavy-calls.js'
import type { FilterPins } from './filter-pins.js'
import { paramsRefused } from '../rpc/params-objects.js'
import { nodesLackOf } from '../verified-reads/nodes-lack.js'

type NodeLabel = 'network' | 'node' | 'kind'

/**
 * The /metrics families of the call path beyond the HTTP front: each node's calls, failures,
 * health, lag, error rate and latency, the cache, in-flight sharing, eth_getLogs splitting,
 * transactions answered by hash and hedging. All are read from live counters when scraped: nothing
 * here is on the request path. Running totals are counters named `_total`; the rest are gauges.
 * Every label value comes from the configuration (networks, node names and kinds).
 */
export function registerCallPathMetrics(
  registry: Registry,
  parts: { upstreams: Upstreams; caller: UpstreamCaller; cache?: ImmutableCache; finality?: FinalityTracker; heavy?: HeavyCalls; filters?: FilterPins },
): void {
  const { upstreams, caller, cache, finality, heavy, filters } = parts
  const counter = (name: string, help: string, value: () => number): void => scrapedValue(registry, 'counter', name, help, value)
  const perNode = (kind: 'counter' | 'gauge', name: string, help: string, value: (s: UpstreamNodeStats) => number | undefined): void => {
    const read = (emit: Emit<NodeLabel>): void => {
      for (const s of upstreams.stats()) {
        const v = value(s)
        if (v !== undefined) emit({ network: s.network, node: s.node, kind: s.kind }, v)
      }
    }
    scraped(registry, kind, { name, help, labelNames: ['network', 'node', 'kind'], read })
  }
  const perNetwork = (kind: 'counter' | 'gauge', name: string, help: string, value: (network: string) => number | undefined): void => {
    const read = (emit: Emit<'network'>): void => {
      for (const network of upstreams.networks()) {
        const v = value(network)
        if (v !== undefined) emit({ network }, v)
      }
    }
    scraped(registry, kind, { name, help, labelNames: ['network'], read })
  }

  perNode('counter', 'tollgate_upstream_calls_total', 'Calls sent to each node since start', (s) => s.calls)
  perNode('counter', 'tollgate_upstream_failures_total', 'Transport failures and time-outs of each node since start', (s) => s.failures)
  perNode(
    'counter',
    'tollgate_upstream_coalesced_batches_total',
    'Batches in which single calls that arrived together went to each node over HTTP',
    (s) => s.coalescedBatches,
  )
  perNode('counter', 'tollgate_upstream_coalesced_calls_total', 'Single calls sent to each node inside such batches', (s) => s.coalescedCalls)
  // What TollgateNoHealthyNode reads: 0 for as long as the node is out, its probes included. A
  // probe read as 1 restarted the alert's `for` at every scrape that caught it (issue 42).
  perNode('gauge', 'tollgate_upstream_healthy', '1 when the node takes calls, 0 while it is out (while it is probed too)', (s) => (s.healthy ? 1 : 0))
  perNode(
    'gauge',
    'tollgate_upstream_half_open',
    '1 while a node that is out may be probed (its cooldown is over) or a probe is in flight; the first probe that succeeds lets it in',
    (s) => (s.halfOpen ? 1 : 0),
  )
  perNode('counter', 'tollgate_upstream_probes_total', 'Calls that probed each node while it was out (head polls and clients’ calls)', (s) => s.probes)
  perNode('gauge', 'tollgate_upstream_in_flight', 'Calls waiting for each node now', (s) => s.inFlight)
  perNode('gauge', 'tollgate_upstream_lag_blocks', 'Blocks each node is behind the best node of its network', (s) => s.lag)
  perNode('gauge', 'tollgate_upstream_head_block', 'The highest head block each node has shown (head polls and its eth_blockNumber answers)', (s) => s.head)
  perNode(
    'gauge',
    'tollgate_upstream_methods_set_aside',
    'Methods each node said it lacks, set aside on it now (health.methodSetAsideMs)',
    (s) => s.methodsSetAside,
  )
  perNode('gauge', 'tollgate_upstream_error_rate', 'Share of failed calls among the last calls of each node', (s) => s.errorRate)
  perNode('gauge', 'tollgate_upstream_latency_p95_ms', 'p95 latency of the recent successful calls of each node (the window hedging uses), ms', (s) =>
    Number.isFinite(s.latencyP95Ms) ? Math.round(s.latencyP95Ms * 10) / 10 : undefined,
  )
  perNode(
    'gauge',
    'tollgate_upstream_chain_id',
    "The chain id each node answered eth_chainId with at the last head poll (a node on another chain than its network's is out)",
    (s) => s.chainId,
  )
  scraped(registry, 'gauge', {
    name: 'tollgate_upstream_out',
    help: '1 while a node is out, by reason (failures, error-rate, behind, wrong-chain, disputes)',
    labelNames: ['network', 'node', 'kind', 'reason'],
    read: (emit) => {
      for (const s of upstreams.stats()) {
        for (const reason of ['failures', 'error-rate', 'behind', 'wrong-chain', 'disputes'])
          emit({ network: s.network, node: s.node, kind: s.kind, reason }, s.outReason === reason ? 1 : 0)
      }
    },
  })

  perNode(
    'counter',
    'tollgate_upstream_disputes_total',
    'Answers of each node that differed from what the other nodes agreed on (networks.<slug>.consensus)',
    (s) => s.disputes,
  )
  perNode(
    'gauge',
    'tollgate_upstream_capacity_slots',
    "This instance's share of each node's upstreams[].maxInFlight (nodes without one: absent)",
    (s) => s.capacity?.slots,
  )
  perNode('gauge', 'tollgate_upstream_waiting', 'Calls waiting for a free slot of each node now', (s) => s.capacity?.waiting)
  // By plan too (the class of account that waited): label values from the plan catalog.
  const perNodeAndPlan = (name: string, help: string, value: (c: CapacityCounters) => number): void =>
    scraped(registry, 'counter', {
      name,
      help,
      labelNames: ['network', 'node', 'kind', 'plan'],
      read: (emit) => {
        for (const s of upstreams.stats()) {
          for (const [plan, c] of s.capacity?.byPlan ?? []) emit({ network: s.network, node: s.node, kind: s.kind, plan }, value(c))
        }
      },
    })
  perNodeAndPlan('tollgate_upstream_capacity_waits_total', 'Calls that waited for a free slot of each node, by plan', (c) => c.waited)
  perNodeAndPlan(
    'tollgate_upstream_capacity_wait_seconds_total',
    'Time calls waited for a free slot of each node, by plan, altogether',
    (c) => c.waitedMs / 1000,
  )
  perNodeAndPlan(
    'tollgate_upstream_capacity_refused_total',
    'Calls refused after waiting limits.capacityWaitMs for a slot (NODES_BUSY), by plan',
    (c) => c.refused,
  )
  perNode('counter', 'tollgate_upstream_sit_outs_total', 'Times each node was set to sit out for answering against consensus too often', (s) => s.sitOuts)
  const consensus = (n: string) => upstreams.pool(n)!.consensus !== undefined
  perNetwork('counter', 'tollgate_consensus_agreed_total', 'Calls checked by consensus and answered by an agreement', (n) =>
    consensus(n) ? upstreams.pool(n)!.consensusCounters.agreed : undefined,
  )
  perNetwork('counter', 'tollgate_consensus_disagreed_total', 'Calls checked by consensus that reached no agreement (NODES_DISAGREE)', (n) =>
    consensus(n) ? upstreams.pool(n)!.consensusCounters.disagreed : undefined,
  )
  perNetwork('counter', 'tollgate_consensus_fanout_total', 'Calls sent to nodes for consensus (each node asked, replacements of failed ones included)', (n) =>
    consensus(n) ? upstreams.pool(n)!.consensusCounters.fanOut : undefined,
  )
  const verifying = (n: string) => upstreams.pool(n)!.verify !== 'off'
  scraped(registry, 'counter', {
    name: 'tollgate_verified_calls_total',
    help: 'Reads of networks that verify (networks.<slug>.verify: reads), by method and outcome: verified, passed (nothing to check: pending, an error, no block), unverified (ANSWER_UNVERIFIED), refused (VERIFY_RANGE_TOO_WIDE, VERIFY_PROOF_TOO_WIDE, VERIFY_NODES_LACK; VERIFY_CALL_TOO_LARGE, VERIFY_GAS_CAPPED, VERIFY_RUN_TIMEOUT), failed (no node answered)',
    labelNames: ['network', 'method', 'outcome'],
    read: (emit) => {
      for (const network of upstreams.networks()) {
        if (!verifying(network)) continue
        for (const [method, byOutcome] of caller.verifiedReads(upstreams.pool(network)!).outcomes)
          for (const [outcome, n] of byOutcome) emit({ network, method, outcome }, n)
      }
    },
  })
  perNetwork('counter', 'tollgate_verify_header_calls_total', 'Node calls made to agree on the headers reads are proven against', (n) =>
    verifying(n) ? caller.verifiedReads(upstreams.pool(n)!).headers.calls : undefined,
  )
  perNetwork(
    'gauge',
    'tollgate_verify_kept_proof_bytes',
    'Bytes of checked eth_getProof answers kept to answer the same read of the same block again (at most 16 MiB a network)',
    (n) => (verifying(n) ? caller.verifiedReads(upstreams.pool(n)!).state.keptBytes : undefined),
  )
  scraped(registry, 'gauge', {
    name: 'tollgate_verify_node_lacks',
    help: 'What verification needs of a node (docs/verified-answers.md) and found the node lacks, worked around at more node calls: eth_getBlockReceipts (receipts one by one), eth_createAccessList (the run finds what it reads), eth_getProof, eth_getCode, eth_call or eth_estimateGas by blockHash (asked by number); 1 per need found since the start',
    labelNames: ['network', 'node', 'needs'],
    read: (emit) => {
      for (const network of upstreams.networks()) {
        if (!verifying(network)) continue
        for (const [node, needs] of nodesLackOf(upstreams.pool(network)!).entries()) for (const need of needs) emit({ network, node, needs: need }, 1)
      }
    },
  })
  scraped(registry, 'counter', {
    name: 'tollgate_verify_failed_total',
    help: "Node answers that failed a check (a proof, a header's hash, a root, a log left out), by node and check: never handed on",
    labelNames: ['network', 'node', 'check'],
    read: (emit) => {
      for (const network of upstreams.networks())
        for (const [node, byCheck] of upstreams.pool(network)!.failedChecks) for (const [check, n] of byCheck) emit({ network, node, check }, n)
    },
  })
  perNetwork(
    'counter',
    'tollgate_hedged_calls_total',
    "Reads also sent to a second node: the first was slower than the best node's p95, or was a probe",
    (n) => upstreams.pool(n)!.hedges.started,
  )
  perNetwork('counter', 'tollgate_hedge_wins_total', 'Hedged reads the second node answered first', (n) => upstreams.pool(n)!.hedges.won)
  perNetwork(
    'counter',
    'tollgate_asked_again_behind_total',
    "Answers asked again of another node because the node was behind: an eth_blockNumber below the network's head, an empty answer",
    (n) => upstreams.pool(n)!.askedAgain.behind,
  )
  perNetwork(
    'counter',
    'tollgate_asked_again_method_missing_total',
    "Calls asked again of another node after a node's 'method not found'",
    (n) => upstreams.pool(n)!.askedAgain.methodMissing,
  )
  counter('tollgate_inflight_shared_total', 'Calls answered by an identical call already in flight upstream', () => caller.inflight.shared)
  counter('tollgate_getlogs_split_total', 'eth_getLogs calls split into chunks', () => caller.logs.counters.split)
  counter('tollgate_getlogs_chunks_total', 'eth_getLogs chunks sent', () => caller.logs.counters.chunks)
  counter('tollgate_getlogs_refused_total', 'eth_getLogs calls refused (range too wide, too many logs)', () => caller.logs.counters.refused)
  scraped(registry, 'counter', {
    name: 'tollgate_params_refused_total',
    help: 'Calls refused when parsed for their params, by error code (PARAMS_MEMBER_CASE: a member named like one the node reads in another case; CALL_DATA_AMBIGUOUS: data and input that differ; LOGS_BOUND_OBJECT: an object as fromBlock or toBlock)',
    labelNames: ['code'],
    read: (emit) => {
      for (const [code, n] of Object.entries(paramsRefused)) emit({ code }, n)
    },
  })
  counter(
    'tollgate_tx_already_known_total',
    'eth_sendRawTransaction answered with the hash where a node said already known',
    () => caller.transactions.counters.alreadyKnown,
  )
  counter(
    'tollgate_tx_broadcast_total',
    'eth_sendRawTransaction sent to every healthy node of the kind at once (networks.<slug>.broadcastTransactions)',
    () => caller.transactions.counters.broadcast,
  )
  counter(
    'tollgate_tx_recovered_total',
    'eth_sendRawTransaction answered with the hash after the first node failed',
    () => caller.transactions.counters.recovered,
  )

  if (cache) {
    const gauge = (name: string, help: string, value: () => number): void => scrapedValue(registry, 'gauge', name, help, value)
    counter('tollgate_cache_hits_total', 'Calls answered from the immutable-answer cache (this process)', () => cache.stats().hits)
    counter('tollgate_cache_misses_total', 'Cacheable calls not in the cache (this process)', () => cache.stats().misses)
    counter('tollgate_cache_stores_total', 'Final answers written to the cache (this process)', () => cache.stats().stores)
    counter('tollgate_cache_evictions_total', 'Entries evicted to stay under cache.maxBytes (this process)', () => cache.stats().evictions)
    gauge('tollgate_cache_bytes', 'Bytes of answers in the cache (every process on the host)', () => cache.stats().bytes)
    gauge('tollgate_cache_entries', 'Answers in the cache (every process on the host)', () => cache.stats().entries)
    perNetwork('counter', 'tollgate_cache_invalidations_total', 'Times the cache of a network was dropped after a reorg below the finalized block', (n) =>
      cache.generation(n),
    )
  }
  if (heavy) {
    scraped(registry, 'gauge', {
      name: 'tollgate_heavy_calls_running',
      help: 'Heavy calls at the nodes now, by plan (each key may have heavy.atOnce, or its plan’s heavyCallsAtOnce)',
      labelNames: ['plan'],
      read: (emit) => {
        for (const [plan, running] of heavy.runningByPlan()) emit({ plan }, running)
      },
    })
  }
  if (filters) {
    scrapedValue(
      registry,
      'gauge',
      'tollgate_filters_pinned',
      'Filters made on the nodes through this instance and live now, all keys together',
      () => filters.size,
    )
    scraped(registry, 'counter', {
      name: 'tollgate_filters_refused_total',
      help: 'New filters refused (TOO_MANY_FILTERS), by the cap (key: limits.maxFiltersPerKey, account: limits.maxFiltersPerAccount, instance: 100,000)',
      labelNames: ['limit'],
      read: (emit) => {
        for (const [limit, n] of Object.entries(filters.stats().refused)) emit({ limit }, n)
      },
    })
    counter('tollgate_filters_evicted_total', "Idle filters uninstalled to make room for their key's or account's new one", () => filters.stats().evicted)
  }
  if (finality) perNetwork('gauge', 'tollgate_finalized_block', 'Finalized block of each network, as the cache uses it', (n) => finality.finalized(n))
}
