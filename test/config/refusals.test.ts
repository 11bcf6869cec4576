import t, { type Test } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError } from '../../src/config/errors.js'
import { loadConfig, parseConfig } from '../../src/config/load.js'

const upstream = { url: 'http://127.0.0.1:8545', kind: 'full' }
const valid = { networks: { 'eth-1': { chainId: 1, upstreams: [upstream] } } }

/** The message parseConfig refuses `json` with (fails the test if it accepts it). */
function refusal(t: Test, json: unknown): string {
  try {
    parseConfig(json, 'config.json')
  } catch (error) {
    t.type(error, ConfigError)
    return (error as Error).message
  }
  t.fail('accepted a bad configuration')
  return ''
}

const withUpstream = (fields: Record<string, unknown>) => ({
  networks: { 'eth-1': { chainId: 1, upstreams: [{ ...upstream, ...fields }] } },
})

t.test('each kind of bad field is named by its path and what was expected', async (t) => {
  const cases: Array<[string, unknown, string]> = [
    ['enum', withUpstream({ kind: 'light' }), 'config.json: /networks/eth-1/upstreams/0/kind must be one of "full", "archive"'],
    ['type', { ...valid, listen: { port: '8080' } }, 'config.json: /listen/port must be integer'],
    ['maximum', { ...valid, listen: { port: 70000 } }, 'config.json: /listen/port must be <= 65535'],
    ['minimum', { ...valid, limits: { maxBatch: 0 } }, 'config.json: /limits/maxBatch must be >= 1'],
    [
      'body time-out beyond what uWS keeps a stalled body',
      { ...valid, limits: { bodyTimeoutMs: 10000 } },
      'config.json: /limits/bodyTimeoutMs must be <= 8000',
    ],
    ['required', { networks: { 'eth-1': { upstreams: [upstream] } } }, 'config.json: /networks/eth-1/chainId is required'],
    ['required at top', {}, 'config.json: /networks is required'],
    ['unknown field', { ...valid, limit: {} }, 'config.json: /limit is not allowed (unknown field)'],
    ['unknown nested field', withUpstream({ wss: 'ws://x' }), 'config.json: /networks/eth-1/upstreams/0/wss is not allowed (unknown field)'],
    ['slug', { networks: { Ethereum: valid.networks['eth-1'] } }, 'config.json: /networks/Ethereum name must match ^[a-z][a-z0-9]*-[0-9]+$'],
    ['url scheme', withUpstream({ url: 'ftp://node' }), 'config.json: /networks/eth-1/upstreams/0/url must match ^https?://[^\\s/]+'],
    ['ws scheme', withUpstream({ ws: 'http://127.0.0.1:8545' }), 'config.json: /networks/eth-1/upstreams/0/ws must match ^wss?://[^\\s/]+'],
    ['no upstream', { networks: { 'eth-1': { chainId: 1, upstreams: [] } } }, 'config.json: /networks/eth-1/upstreams must have at least 1 item'],
    ['anyOf', { ...valid, events: { nats: 4222 } }, 'config.json: /events/nats must be string; or an array of string'],
    ['anyOf branch', { ...valid, events: { nats: ['127.0.0.1:4222'] } }, 'config.json: /events/nats/0 must match ^(nats|tls|ws|wss)://[^\\s]+$'],
    ['empty string', { ...valid, dataDir: '' }, 'config.json: /dataDir must not be empty'],
    ['root', [], 'config.json: / must be object'],
  ]
  for (const [name, json, message] of cases) t.equal(refusal(t, json), message, name)
})

t.test('what the schema cannot check: URLs that only look right, duplicate names', async (t) => {
  t.equal(refusal(t, { ...valid, publicUrl: 'https://[::1' }), 'config.json: /publicUrl must be a valid URL, got "https://[::1"')
  t.equal(
    refusal(t, { ...valid, publicUrl: 'https://rpc.example.com/?x=1' }),
    'config.json: /publicUrl must not have a ?query (endpoint paths are appended to it)',
  )
  t.equal(
    refusal(t, withUpstream({ url: 'http://exa mple.com' })),
    'config.json: /networks/eth-1/upstreams/0/url must be a valid URL, got "http://exa mple.com"',
  )
  t.equal(
    refusal(t, {
      networks: {
        'eth-1': {
          chainId: 1,
          upstreams: [
            { ...upstream, name: 'a' },
            { ...upstream, name: 'a' },
          ],
        },
      },
    }),
    'config.json: /networks/eth-1/upstreams/1/name duplicates the name "a"',
  )
})

t.test('consensus: agreement within participants, and enough nodes of each kind to agree', async (t) => {
  const two = [upstream, { ...upstream, url: 'http://127.0.0.1:8546' }]
  const withConsensus = (consensus: unknown, upstreams = two) => ({ networks: { 'eth-1': { chainId: 1, upstreams, consensus } } })
  t.equal(
    refusal(t, withConsensus({ participants: 2, agreement: 3 })),
    'config.json: /networks/eth-1/consensus/agreement must be at most participants (2): more nodes cannot agree than are asked\n' +
      'config.json: /networks/eth-1/consensus/agreement the network has 2 full nodes, fewer than agreement (3): no call of that kind could be agreed',
  )
  t.equal(
    refusal(t, withConsensus({ participants: 2, agreement: 2 }, [upstream])),
    'config.json: /networks/eth-1/consensus/agreement the network has 1 full node, fewer than agreement (2): no call of that kind could be agreed',
  )
  t.match(refusal(t, withConsensus({ participants: 2 })), /consensus\/agreement is required/)
  t.doesNotThrow(() => parseConfig(withConsensus({ participants: 2, agreement: 2, methods: ['eth_call'] }), 'config.json'))
})

t.test('methodCosts: a cost for a method the gateway does not serve, or not a whole number, is refused by name', async (t) => {
  t.equal(
    refusal(t, { ...valid, methodCosts: { eth_sign: 5 } }),
    'config.json: /methodCosts/eth_sign is not a method this gateway serves nor a network forwards (Method not found: eth_sign is not available through this gateway: it signs with the node’s own accounts; sign locally and use eth_sendRawTransaction)',
  )
  t.match(
    refusal(t, { ...valid, methodCosts: { admin_peers: 5 } }),
    /^config\.json: \/methodCosts\/admin_peers is not a method this gateway serves nor a network forwards \(.*the namespace administers the node\)$/,
  )
  t.equal(refusal(t, { ...valid, methodCosts: { eth_call: -1 } }), 'config.json: /methodCosts/eth_call must be >= 0')
  t.equal(refusal(t, { ...valid, methodCosts: { eth_call: 2.5 } }), 'config.json: /methodCosts/eth_call must be integer')
  t.match(refusal(t, { ...valid, methodCosts: { 'eth call': 5 } }), /^config\.json: \/methodCosts\/eth call name must match /)
  t.match(
    refusal(t, { ...valid, methodCosts: { eth_someNewMethod: 7 } }),
    /^config\.json: \/methodCosts\/eth_someNewMethod is not a method this gateway serves nor a network forwards \(.* forwardMethods\)$/,
  )
  const forwarding = { networks: { 'eth-1': { ...valid.networks['eth-1'], forwardMethods: ['eth_someNew*'] } } }
  t.same(
    parseConfig({ ...forwarding, methodCosts: { eth_call: 30, eth_someNewMethod: 7 } }).methodCosts,
    { eth_call: 30, eth_someNewMethod: 7 },
    'a method a network forwards',
  )
})

t.test('forwardMethods: names and prefixes with *; a name refused whatever the list says is refused by name', async (t) => {
  const forwarding = (forwardMethods: unknown) => ({ networks: { 'eth-1': { ...valid.networks['eth-1'], forwardMethods } } })
  t.same(parseConfig(forwarding(['debug_getRaw*', 'ots_getApiLevel'])).networks['eth-1'].forwardMethods, ['debug_getRaw*', 'ots_getApiLevel'])
  t.equal(
    refusal(t, forwarding(['ots_getApiLevel', 'debug_resetHead'])),
    'config.json: /networks/eth-1/forwardMethods/1 is never forwarded (Method not found: debug_resetHead is not available through this gateway: it changes the node’s chain or its sync)',
  )
  t.match(refusal(t, forwarding(['*'])), /^config\.json: \/networks\/eth-1\/forwardMethods\/0 must match \^/)
  t.match(refusal(t, forwarding(['debug_*Raw'])), /^config\.json: \/networks\/eth-1\/forwardMethods\/0 must match \^/, 'a * only at the end')
})

t.test('several problems are all reported, one per line', async (t) => {
  const message = refusal(t, { listen: { port: -1 }, networks: { 'eth-1': { chainId: 0, upstreams: [upstream] } } })
  t.same(message.split('\n'), ['config.json: /listen/port must be >= 0', 'config.json: /networks/eth-1/chainId must be >= 1'])
})

t.test('loadConfig: a file is read; a JSON syntax error names the file, line and column; a missing file says so', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-config-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const good = join(dir, 'good.json')
  writeFileSync(good, JSON.stringify(valid))
  t.equal(loadConfig(good).limits.maxBatch, 100)

  const broken = join(dir, 'broken.json')
  writeFileSync(broken, '{\n  "networks": {\n    "eth-1": { "chainId": 1 }\n    "x": 1\n  }\n}\n')
  t.throws(() => loadConfig(broken), {
    name: 'ConfigError',
    message: new RegExp(`^${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: invalid JSON at line 4, column 5`),
  })

  const badField = join(dir, 'bad.json')
  writeFileSync(badField, JSON.stringify(withUpstream({ kind: 'light' })))
  t.throws(() => loadConfig(badField), { message: `${badField}: /networks/eth-1/upstreams/0/kind must be one of "full", "archive"` })

  t.throws(() => loadConfig(join(dir, 'absent.json')), { name: 'ConfigError', message: /absent\.json: cannot read the configuration file \(no such file\)/ })
})
