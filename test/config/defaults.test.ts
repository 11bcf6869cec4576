import t from 'tap'
import { parseConfig } from '../../src/config/load.js'

const minimal = {
  networks: {
    'eth-1': { chainId: 1, upstreams: [{ url: 'http://127.0.0.1:8545', kind: 'full' }] },
  },
}

t.test('every default is filled in', async (t) => {
  const config = parseConfig(minimal)
  t.same(config.listen, { host: '127.0.0.1', port: 8080 })
  t.same(config.admin, { listen: { host: '127.0.0.1', port: 9090 } }, 'the admin listener: loopback')
  t.equal(config.dataDir, './data')
  t.same(config.events, { stream: 'TOLLGATE', subjectPrefix: 'tollgate', replicas: 1, partitions: 1, outageLogEveryMs: 30000 })
  t.equal(config.events.nats, undefined, 'no NATS: the embedded log')
  t.same(config.plans, { catalog: 'default' })
  t.same(config.limits, {
    maxBodyBytes: 1048576,
    maxBatch: 100,
    upstreamTimeoutMs: 30000,
    capacityWaitMs: 1000,
    maxUpstreamBytes: 33554432,
    batchConcurrency: 16,
    bodyTimeoutMs: 5000,
    queueMs: 250,
    ipThrottle: { rejections: 2000, windowMs: 10000, durationMs: 60000 },
    maxFiltersPerKey: 500,
    maxFiltersPerAccount: 1000,
  })
  t.equal(config.ws.maxSubscriptionsPerConnection, 100)
  t.same(config.routing, { fullNodeWindowBlocks: 128 })
  t.equal(config.trustProxy, false)
  t.same(config.usage, { intervalMs: 1000, project: true })
  t.equal(config.publicUrl, undefined)
})

t.test('given values win over defaults, field by field', async (t) => {
  const config = parseConfig({
    ...minimal,
    listen: { port: 0 },
    events: { nats: 'nats://127.0.0.1:4222', replicas: 3 },
    limits: { maxBatch: 10 },
  })
  t.same(config.listen, { host: '127.0.0.1', port: 0 })
  t.same(config.events, { nats: 'nats://127.0.0.1:4222', replicas: 3, stream: 'TOLLGATE', subjectPrefix: 'tollgate', partitions: 1, outageLogEveryMs: 30000 })
  t.equal(config.limits.maxBatch, 10)
  t.equal(config.limits.maxBodyBytes, 1048576)
})

t.test('the example configuration of the architecture works', async (t) => {
  const config = parseConfig({
    listen: { host: '127.0.0.1', port: 8080 },
    dataDir: './data',
    events: { nats: 'nats://127.0.0.1:4222' },
    networks: {
      'eth-1': {
        chainId: 1,
        upstreams: [
          { url: 'http://127.0.0.1:8545', ws: 'ws://127.0.0.1:8545', kind: 'full' },
          { url: 'http://127.0.0.1:8546', ws: 'ws://127.0.0.1:8546', kind: 'archive' },
        ],
      },
    },
  })
  t.same(
    config.networks['eth-1'].upstreams.map((u) => u.name),
    ['127.0.0.1:8545', '127.0.0.1:8546'],
    'upstream names default to host:port',
  )
})

t.test('default upstream names stay unique; publicUrl loses its trailing slash', async (t) => {
  const config = parseConfig({
    publicUrl: 'https://rpc.example.com/',
    networks: {
      'eth-1': {
        chainId: 1,
        upstreams: [
          { url: 'http://127.0.0.1:8545', kind: 'full' },
          { url: 'http://127.0.0.1:8545', kind: 'archive' },
          { url: 'https://node.example.com/rpc', kind: 'archive', name: 'paid' },
        ],
      },
    },
  })
  t.same(
    config.networks['eth-1'].upstreams.map((u) => u.name),
    ['127.0.0.1:8545', '127.0.0.1:8545#2', 'paid'],
  )
  t.equal(config.publicUrl, 'https://rpc.example.com')
})

t.test('the result is deeply frozen and the input is not touched', async (t) => {
  const input = structuredClone(minimal)
  const config = parseConfig(input)
  t.ok(Object.isFrozen(config))
  t.ok(Object.isFrozen(config.limits))
  t.ok(Object.isFrozen(config.networks['eth-1'].upstreams[0]))
  t.throws(() => {
    ;(config.limits as { maxBatch: number }).maxBatch = 1
  }, TypeError)
  t.same(input, minimal, 'defaults were not written into the caller object')
  t.notOk(Object.isFrozen(input))
})
