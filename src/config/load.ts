import { readFileSync } from 'node:fs'
import { compileCheck, type CheckResult } from '../../schemas/check.js'
import { configSchema } from '../../schemas/config.js'
import { ConfigError, type ConfigProblem } from './errors.js'
import { deepFreeze } from './deep-freeze.js'
import { MethodRules, methodRule, refusalOf } from '../rpc/method-policy.js'
import type { Config } from './types.js'

/**
 * Read, check and freeze the configuration file at `path`. Throws ConfigError naming the
 * file, and the field or the JSON position, when it cannot be used.
 *
 * @example
 * const config = loadConfig('tollgate.json') // config.limits.maxBatch === 100 unless set
 */
export function loadConfig(path: string): Config {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (cause) {
    const reason = (cause as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String((cause as Error).message)
    throw new ConfigError(path, [{ path: '', message: `cannot read the configuration file (${reason})` }], { cause })
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (cause) {
    throw new ConfigError(path, [{ path: '', message: describeSyntaxError(text, cause as Error) }], { cause })
  }
  return parseConfig(json, path)
}

/** Compiled on first use: a process that never reads a configuration does not pay for it. */
let checkConfig: ((json: unknown) => CheckResult<Config>) | undefined

/**
 * Check an already parsed configuration: fill defaults, validate against the schema, check
 * what the schema cannot express, and return a deep-frozen copy. `source` names it in errors.
 */
export function parseConfig(json: unknown, source = 'config'): Config {
  checkConfig ??= compileCheck(configSchema, { defaults: true })
  const result = checkConfig(json)
  if (!result.ok) throw new ConfigError(source, result.problems)
  const config = result.value
  const problems = checkBeyondSchema(config)
  if (problems.length > 0) throw new ConfigError(source, problems)
  nameUpstreams(config)
  if (config.publicUrl !== undefined) config.publicUrl = config.publicUrl.replace(/\/+$/, '')
  if (config.payments !== undefined) {
    // Lower case: addresses are compared with log topics, which nodes return in lower case.
    config.payments.token = config.payments.token.toLowerCase()
    config.payments.treasury = config.payments.treasury.toLowerCase()
  }
  return deepFreeze(config)
}

/** URLs a pattern only half checks (`http://[::1` passes a prefix pattern), and the like. */
function checkBeyondSchema(config: Config): ConfigProblem[] {
  const problems: ConfigProblem[] = []
  const checkUrl = (path: string, value: string | undefined, schemes: string[]): void => {
    if (value === undefined) return
    let url: URL
    try {
      url = new URL(value)
    } catch {
      problems.push({ path, message: `must be a valid URL, got ${JSON.stringify(value)}` })
      return
    }
    if (!schemes.includes(url.protocol)) {
      problems.push({ path, message: `must be a ${schemes.map((s) => s.slice(0, -1)).join(' or ')} URL` })
    }
    if (url.hash !== '') problems.push({ path, message: 'must not have a #fragment' })
  }
  if (config.publicUrl !== undefined) {
    checkUrl('/publicUrl', config.publicUrl, ['http:', 'https:'])
    if (URL.canParse(config.publicUrl) && new URL(config.publicUrl).search !== '') {
      problems.push({ path: '/publicUrl', message: 'must not have a ?query (endpoint paths are appended to it)' })
    }
  }
  const nats = config.events.nats
  if (nats === undefined && config.events.partitions > 1) {
    problems.push({
      path: '/events/partitions',
      message: `is ${config.events.partitions}, but usage partitions are JetStream streams and events.nats is not set (the embedded log is one file in one order): set events.nats, or remove events.partitions`,
    })
  }
  if (nats === undefined && !config.usage.project) {
    problems.push({
      path: '/usage/project',
      message:
        'is false, but events.nats is not set: an instance that does not project usage asks one that does over NATS, and the embedded log has no other instance: set events.nats, or remove usage.project',
    })
  }
  for (const [i, url] of (Array.isArray(nats) ? nats : nats === undefined ? [] : [nats]).entries()) {
    checkUrl(Array.isArray(nats) ? `/events/nats/${i}` : '/events/nats', url, ['nats:', 'tls:', 'ws:', 'wss:'])
  }
  if (config.payments !== undefined && config.networks[config.payments.network] === undefined) {
    problems.push({ path: '/payments/network', message: `must be one of the configured networks (${Object.keys(config.networks).join(', ')})` })
  }
  for (const [slug, network] of Object.entries(config.networks)) {
    const names = new Set<string>()
    network.upstreams.forEach((upstream, i) => {
      const at = `/networks/${slug}/upstreams/${i}`
      checkUrl(`${at}/url`, upstream.url, ['http:', 'https:'])
      checkUrl(`${at}/ws`, upstream.ws, ['ws:', 'wss:'])
      if (upstream.name !== undefined) {
        // Two upstreams with one name would merge their metrics and logs.
        if (names.has(upstream.name)) problems.push({ path: `${at}/name`, message: `duplicates the name ${JSON.stringify(upstream.name)}` })
        names.add(upstream.name)
      }
    })
    const consensus = network.consensus
    if (consensus !== undefined) {
      const at = `/networks/${slug}/consensus`
      if (consensus.agreement > consensus.participants) {
        problems.push({ path: `${at}/agreement`, message: `must be at most participants (${consensus.participants}): more nodes cannot agree than are asked` })
      }
      // Each kind that has nodes must have enough of them, or every checked call of that kind fails.
      for (const kind of ['full', 'archive'] as const) {
        const n = network.upstreams.filter((u) => u.kind === kind).length
        if (n > 0 && n < consensus.agreement) {
          problems.push({
            path: `${at}/agreement`,
            message: `the network has ${n} ${kind} node${n === 1 ? '' : 's'}, fewer than agreement (${consensus.agreement}): no call of that kind could be agreed`,
          })
        }
      }
    }
  }
  for (const [slug, network] of Object.entries(config.networks)) {
    for (const [i, entry] of (network.forwardMethods ?? []).entries()) {
      // A name the gateway refuses whatever the list says: the operator would believe it is served.
      const refused = entry.endsWith('*') ? undefined : refusalOf(entry)
      if (refused !== undefined) problems.push({ path: `/networks/${slug}/forwardMethods/${i}`, message: `is never forwarded (${refused})` })
    }
  }
  const forwarded = new MethodRules({}, Object.fromEntries(Object.entries(config.networks).map(([slug, n]) => [slug, n.forwardMethods])))
  for (const method of Object.keys(config.methodCosts)) {
    // A cost for a method the gateway refuses would never apply: most likely a typo, so say which.
    const rule = methodRule(method, 'ws')
    if (!rule.ok && !Object.keys(config.networks).some((slug) => forwarded.rule(method, 'ws', slug).ok)) {
      problems.push({ path: `/methodCosts/${method}`, message: `is not a method this gateway serves nor a network forwards (${rule.message})` })
    }
  }
  return problems
}

/** Default upstream names: host:port of the url, made unique within the network. */
function nameUpstreams(config: Config): void {
  for (const network of Object.values(config.networks)) {
    const taken = new Set(network.upstreams.flatMap((u) => (u.name === undefined ? [] : [u.name])))
    for (const upstream of network.upstreams) {
      if (upstream.name !== undefined) continue
      const url = new URL(upstream.url)
      const base = `${url.hostname}:${url.port || (url.protocol === 'https:' ? '443' : '80')}`
      let name = base
      for (let n = 2; taken.has(name); n++) name = `${base}#${n}`
      taken.add(name)
      upstream.name = name
    }
  }
}

/** "invalid JSON at line 3, column 5: Expected ',' or '}' after property value" */
function describeSyntaxError(text: string, error: Error): string {
  const position = /at position (\d+)/.exec(error.message)
  const reason = error.message.replace(/ in JSON at position \d+.*$/s, '').replace(/^JSON\.parse: /, '')
  if (position === null) return `invalid JSON: ${reason}`
  const before = text.slice(0, Number(position[1]))
  const line = before.split('\n').length
  const column = before.length - before.lastIndexOf('\n')
  return `invalid JSON at line ${line}, column ${column}: ${reason}`
}
