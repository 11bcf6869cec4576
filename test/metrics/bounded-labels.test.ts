import t from 'tap'
import { NetworkLabels, methodLabel } from '../../src/metrics/labels.js'
import { gatewayRegistry } from '../../src/metrics/registry.js'
import { UpstreamDurations } from '../../src/metrics/upstream-durations.js'
import { HttpCounters } from '../../src/front/http-counters.js'

t.test('network label values: configured slugs, else other', async (t) => {
  const networks = new NetworkLabels(['eth-1', 'pol-1'])
  t.equal(networks.of('eth-1'), 'eth-1')
  t.equal(networks.of('bsc-1'), 'other', 'a valid slug that is not configured')
  t.equal(networks.of('"}\n'), 'other')
  t.same(networks.values, ['eth-1', 'pol-1', 'other'])
})

t.test('method label values: the method table, else other', async (t) => {
  t.equal(methodLabel('eth_call'), 'eth_call')
  t.equal(methodLabel('eth_madeUp'), 'other')
  t.equal(methodLabel('constructor'), 'other', 'not an Object.prototype name either')
  t.equal(methodLabel('__proto__'), 'other')
})

t.test('the request-path counters and the duration histogram keep to the bounded labels', async (t) => {
  const registry = gatewayRegistry()
  const counters = new HttpCounters(registry, new NetworkLabels(['eth-1']))
  for (let i = 0; i < 1000; i++) counters.answered(`x${i}-1`, 404)
  counters.answered('eth-1', 200)
  counters.answered('eth-1', 200)
  const record = new UpstreamDurations(registry).forNode('eth-1', 'a', 'full')
  record('eth_call', 3)
  for (let i = 0; i < 100; i++) record(`made_up${i}`, 40)
  const text = await registry.metrics()
  t.same(
    text.split('\n').filter((l) => l.startsWith('tollgate_http_responses_total')),
    ['tollgate_http_responses_total{network="other",status="404"} 1000', 'tollgate_http_responses_total{network="eth-1",status="200"} 2'],
  )
  t.same(
    [...new Set([...text.matchAll(/tollgate_upstream_request_duration_seconds_count\{([^}]*)\} (\d+)/g)].map((m) => `${m[1]} ${m[2]}`))],
    ['network="eth-1",node="a",kind="full",method="eth_call" 1', 'network="eth-1",node="a",kind="full",method="other" 100'],
  )
  t.match(
    text,
    /tollgate_upstream_request_duration_seconds_bucket\{le="0\.005",network="eth-1",node="a",kind="full",method="eth_call"\} 1\n/,
    '3 ms is in the 5 ms bucket',
  )
})

t.test('each gateway has its own registry', async (t) => {
  const a = gatewayRegistry()
  const b = gatewayRegistry()
  new HttpCounters(a, new NetworkLabels(['eth-1'])).answered('eth-1', 200)
  new HttpCounters(b, new NetworkLabels(['eth-1']))
  t.match(await a.metrics(), /tollgate_http_responses_total\{network="eth-1",status="200"\} 1/)
  t.notMatch(await b.metrics(), /tollgate_http_responses_total\{/, 'nothing counted in the other')
  t.match(await b.metrics(), /^process_resident_memory_bytes \d+/m, 'both have the process metrics')
})
