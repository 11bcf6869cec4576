import t from 'tap'
import { DEFAULT_WS_KEY_LIMITS } from '../../actors/account/ws-limits.js'
import { parseConfig } from '../../src/config/load.js'
import { wsLimitsOf } from '../../src/gateway/key-directory.js'

const minimal = { networks: { 'eth-1': { chainId: 1, upstreams: [{ url: 'http://127.0.0.1:8545', kind: 'full' }] } } }

t.test("the ws section's per-key limits reach the key actor under their own names", async (t) => {
  t.same(wsLimitsOf(undefined, parseConfig(minimal).ws), DEFAULT_WS_KEY_LIMITS, 'the defaults are the spec values the actor starts with')
  const config = parseConfig({ ...minimal, ws: { maxConnectionsPerKey: 3, penaltyMs: 1000, maxMessageBytes: 2048 } })
  t.same(
    wsLimitsOf(undefined, config.ws),
    { ...DEFAULT_WS_KEY_LIMITS, maxConnectionsPerKey: 3, penaltyMs: 1000 },
    "given values win; the limits of one connection (maxMessageBytes) are not the key actor's",
  )
})

t.test('the default limits are the spec values', async (t) => {
  t.same(DEFAULT_WS_KEY_LIMITS, {
    maxConnectionsPerKey: 50,
    newConnectionsPerSecond: 15,
    cooldownMs: 60_000,
    messagesPerSecond: 500,
    tolerance: 0.1,
    badMessages: 20,
    badMessagesWindowMs: 60_000,
    penaltyMs: 5 * 60_000,
  })
  t.ok(Object.isFrozen(DEFAULT_WS_KEY_LIMITS))
})
