/**
 * One value of GET /metrics (Prometheus text) on a gateway's admin listener (`gateway.admin`),
 * matched by name and labels; undefined when absent.
 */
export async function metric(adminUrl: string, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  return readMetric(await metricsPage(adminUrl), name, labels)
}

/** The whole /metrics page, for reading several values of one scrape with {@link readMetric}. */
export async function metricsPage(adminUrl: string): Promise<string> {
  return (await fetch(`${adminUrl}/metrics`)).text()
}

/** One value of a /metrics page, matched by name and labels; undefined when absent. */
export function readMetric(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line)
    if (!m || m[1] !== name) continue
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]))
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3])
  }
  return undefined
}

export { until } from './eventually.js'

/**
 * One value of /metrics that must be there, e.g. a counter read before and after what the test
 * does (`tollgate_upstream_calls_total`: what reached the nodes); throws naming it when absent.
 * @example
 * const before = await metricNow(tg.gateway.admin, 'tollgate_upstream_calls_total')
 */
export async function metricNow(adminUrl: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const value = await metric(adminUrl, name, labels)
  if (value === undefined) throw new Error(`${name} ${JSON.stringify(labels)} is not on ${adminUrl}/metrics`)
  return value
}
