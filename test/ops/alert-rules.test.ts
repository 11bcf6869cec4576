import { execFile } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { parse, stringify } from 'yaml'

// The alert rules of deploy/monitoring/alerts.yml unit-tested the Prometheus way: `promtool check
// rules`, then `promtool test rules` on one file per alert in deploy/monitoring/tests/, each with
// synthetic series that hold the condition just under and just over its `for`, and a flicker that
// must not fire. A rule is only as good as the series it was tried on: before these, the 5xx alert
// paged for a one-minute failover (its 5-minute window held the share over 5 % for 5 minutes).
// Each rule is also broken on purpose (its hold halved): its test file must then fail, so that a
// test file which passes whatever the rule says is caught too.

const MONITORING = join(import.meta.dirname, '..', '..', 'deploy', 'monitoring')
const TESTS = join(MONITORING, 'tests')
const PROMTOOL = ['/usr/bin/promtool', ...(process.env.PATH ?? '').split(':').map((d) => join(d, 'promtool'))].find((p) => existsSync(p))

interface Rule {
  alert: string
  expr: string
  for?: string
}

function run(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(PROMTOOL!, args, { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, out: `${stdout}${stderr}` })
    })
  })
}

const rules: Rule[] = parse(readFileSync(join(MONITORING, 'alerts.yml'), 'utf8')).groups.flatMap((g: { rules: Rule[] }) => g.rules)
const testFiles = readdirSync(TESTS).filter((f) => f.endsWith('.test.yml'))
/** The test file of each alert: the one whose cases name it. */
const fileOf = new Map(rules.map((r) => [r.alert, testFiles.find((f) => readFileSync(join(TESTS, f), 'utf8').includes(`alertname: ${r.alert}\n`))]))

/** The rule with its hold halved: its `for`, or (with none) the ranges its expression reads. */
function weakened(rule: Rule): Rule {
  const half = (d: string): string => `${Math.round(seconds(d) / 2)}s`
  if (rule.for !== undefined) return { ...rule, for: half(rule.for) }
  return { ...rule, expr: rule.expr.replace(/\[(\d+[smh])\]/g, (_, d: string) => `[${half(d)}]`) }
}

function seconds(d: string): number {
  const m = /^(\d+)([smh])$/.exec(d)
  if (m === null) throw new Error(`a duration this test does not read: ${d}`)
  return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] as 's' | 'm' | 'h']
}

if (PROMTOOL === undefined) {
  t.plan(0, 'promtool is not installed (Debian: apt-get install prometheus, as .ci/run does): the alert rules are not unit-tested')
} else {
  t.test('promtool check rules accepts alerts.yml, every rule of it', async (t) => {
    const { code, out } = await run(['check', 'rules', join(MONITORING, 'alerts.yml')])
    t.equal(code, 0, out)
    t.match(out, `SUCCESS: ${rules.length} rules found`)
  })

  t.test('every alert has its test file, with a case that fires and one that does not', async (t) => {
    for (const { alert } of rules) {
      const file = fileOf.get(alert)
      t.ok(file, `${alert}: a test file in deploy/monitoring/tests/ names it`)
      if (file === undefined) continue
      const cases = parse(readFileSync(join(TESTS, file), 'utf8')).tests.flatMap((c: any) => c.alert_rule_test ?? [])
      const own = cases.filter((c: any) => c.alertname === alert)
      t.ok(
        own.some((c: any) => c.exp_alerts.length > 0),
        `${file}: ${alert} fires`,
      )
      t.ok(
        own.some((c: any) => c.exp_alerts.length === 0),
        `${file}: ${alert} does not (under its hold, or a flicker)`,
      )
    }
  })

  for (const file of testFiles) {
    t.test(`promtool test rules ${file}`, async (t) => {
      const { code, out } = await run(['test', 'rules', join(TESTS, file)])
      t.equal(code, 0, out)
    })
  }

  t.test('each test file fails when its rule holds for half as long', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'tollgate-rules-'))
    t.teardown(() => rm(dir, { recursive: true, force: true }))
    await cp(TESTS, join(dir, 'tests'), { recursive: true })
    for (const rule of rules) {
      const file = fileOf.get(rule.alert)
      if (file === undefined) continue
      const doc = parse(readFileSync(join(MONITORING, 'alerts.yml'), 'utf8'))
      doc.groups = doc.groups.map((g: { rules: Rule[] }) => ({ ...g, rules: g.rules.map((r) => (r.alert === rule.alert ? weakened(r) : r)) }))
      await writeFile(join(dir, 'alerts.yml'), stringify(doc))
      const { code, out } = await run(['test', 'rules', join(dir, 'tests', file)])
      t.not(code, 0, `${rule.alert} weakened (${JSON.stringify(weakened(rule).for ?? weakened(rule).expr)}): ${file} fails`)
      t.match(out, `alertname: ${rule.alert}`, 'on that alert')
    }
  })
}
