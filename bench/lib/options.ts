import { parseArgs } from 'node:util'

/** What `npm run bench -- …` accepts. */
export interface BenchOptions {
  quick: boolean
  /** Rounds per scenario: targets interleaved A B C A B C …; medians over rounds. */
  rounds: number
  /** Seconds of one measurement. */
  durationS: number
  /** Seconds of load on each target before a scenario's rounds (not measured). */
  warmupS: number
  /** Scenario names to run (default all). */
  only?: string[]
  /** Another commit whose gateway runs beside this one (`gateway@REF`), for before/after ratios. */
  baseline?: string
  /** Profile the gateway on the small-call scenario instead of running the comparison. */
  profile: boolean
  /** wrk connections for small calls and batches. */
  connections: number
  /** Put this run's figures into bench/README.md (between its bench:latest markers). */
  updateReadme: boolean
}

const USAGE = `npm run bench -- [--quick] [--rounds N] [--duration S] [--warmup S] [--only small,large,...]
                     [--baseline GIT_REF] [--profile] [--connections N] [--update-readme]

  --quick        one round of 1 s per target, no warm-up (under a minute); a smoke run, not figures
  --rounds       rounds per scenario, targets interleaved (default 3)
  --duration     seconds per measurement (default 5)
  --only         scenarios: small, large, large-gzip, batch, ws, fixed-rate, gzip-isolation, event-log
  --baseline     also run the gateway of another commit (git archive of REF), e.g. --baseline main
  --update-readme  write this run's figures into bench/README.md (its bench:latest section)
  --profile      node --cpu-prof on the gateway under load (small calls, or --only large|large-gzip|batch);
                 prints the top costs, writes bench/results/profile-<scenario>.txt
`

export function parseBenchOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      only: { type: 'string' },
      baseline: { type: 'string' },
      profile: { type: 'boolean', default: false },
      connections: { type: 'string' },
      'update-readme': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  })
  if (values.help) {
    process.stdout.write(USAGE)
    process.exit(0)
  }
  const quick = values.quick === true
  return {
    quick,
    rounds: Number(values.rounds ?? (quick ? 1 : 3)),
    durationS: Number(values.duration ?? (quick ? 1 : 5)),
    warmupS: Number(values.warmup ?? (quick ? 0 : 2)),
    only: values.only?.split(',').map((s) => s.trim()).filter(Boolean),
    baseline: values.baseline,
    profile: values.profile === true,
    connections: Number(values.connections ?? 50),
    updateReadme: values['update-readme'] === true,
  }
}
