import t from 'tap'
import { parseConfig } from '../../src/config/load.js'
import { restartNeeded } from '../../src/main/reload.js'

// Which changes a reload applies and which it refuses as needing a restart, by field.

const base = {
  listen: { host: '127.0.0.1', port: 8080 },
  networks: { 'eth-1': { chainId: 1, upstreams: [{ url: 'http://127.0.0.1:8545', kind: 'full' }] } },
}
const running = parseConfig(base)
const refused = (change: Record<string, unknown>) => restartNeeded(running, parseConfig({ ...base, ...change }))

t.test('nodes, plans, limits, health and hedging change live', async (t) => {
  t.same(
    refused({
      networks: {
        'eth-1': { chainId: 1, upstreams: [{ url: 'http://127.0.0.1:8546', kind: 'full', maxInFlight: 8 }], consensus: { participants: 1, agreement: 1 } },
        'bsc-1': { chainId: 56, upstreams: [{ url: 'http://127.0.0.1:8547', kind: 'archive' }] },
      },
      plans: { catalog: 'set-b' },
      limits: { maxBatch: 10, queueMs: 0, upstreamTimeoutMs: 5000, ipThrottle: { rejections: 10 } },
      health: { failureThreshold: 5, pollMs: 500 },
      hedge: { enabled: false },
    }),
    [],
  )
})

t.test('listeners, the event backend, the data folder, workers and the front end’s body limits need a restart', async (t) => {
  t.same(refused({ listen: { host: '127.0.0.1', port: 8081 } }), ['listen.port'])
  t.same(refused({ admin: { listen: { port: 9091 } } }), ['admin.listen.port'])
  t.same(refused({ events: { nats: 'nats://127.0.0.1:4222' } }), ['events.nats'])
  t.same(refused({ dataDir: './elsewhere' }), ['dataDir'])
  t.same(refused({ workers: 2 }), ['workers'])
  t.same(refused({ dashboard: { limits: { api: { perIp: { burst: 1 } } } } }), ['dashboard.limits.api.perIp.burst'])
  t.same(refused({ limits: { maxBodyBytes: 1024, maxBatch: 10 } }), ['limits.maxBodyBytes'], 'only the limit read at start, not the live one beside it')
  t.same(refused({ listen: { host: '0.0.0.0', port: 8081 }, workers: 3 }).sort(), ['listen.host', 'listen.port', 'workers'], 'every field named')
})
