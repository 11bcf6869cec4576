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
  /** The `workers` scenario's counts of gateway processes (default 1, 2). */
  workers: number[]
  /** `--workers` was given: the workers scenario runs even where `--only` does not name it. */
  workersAsked: boolean
  /** `load`: wrk and the stub on the last CPU (taskset) in the workers scenario; `none`: nothing pinned. */
  pin: 'load' | 'none'
  /** Results go to bench/results/<name>.json and .md (default latest). */
  results: string
}

const USAGE = `npm run bench -- [--quick] [--rounds N] [--duration S] [--warmup S] [--only small,large,...]
                     [--baseline GIT_REF] [--profile] [--connections N] [--update-readme]
                     [--workers 1,2] [--pin load|none] [--results NAME]

  --quick        one round of 1 s per target, no warm-up (under a minute); a smoke run, not figures
  --rounds       rounds per scenario, targets interleaved (default 3)
  --duration     seconds per measurement (default 5)
  --only         scenarios: small, small-distinct, large, large-gzip, batch, batch-distinct, metering, ws, workers, fixed-rate,
                 pinned-latency, gzip-isolation, slowloris, event-log
                 (metering: the gateway with and without usage metering loaded at once, the CPU per call metering adds)
                 (pinned-latency: nginx, then the gateway, alone on CPU 0, the load and the stub on CPU 1; needs taskset
                 and 2 CPUs, skipped with a note otherwise)
  --workers      the workers scenario's counts of gateway processes (default 1,2): \`tollgate start\` with \`workers: N\`;
                 given, the scenario runs even if --only leaves it out (--only small --workers 1,2)
  --pin          load (default, when taskset exists): wrk and the stub on the last CPU during the workers scenario;
                 none: nothing pinned
  --results      write bench/results/NAME.json and NAME.md instead of latest.* (e.g. a scenario run alone)
  --baseline     also run the gateway of another commit (git archive of REF), e.g. --baseline main
  --update-readme  write this run's figures into bench/README.md (its bench:latest section)
  --profile      node --cpu-prof on the gateway under load (small calls, or --only large|large-gzip|batch);
                 prints the top costs, writes bench/results/profile-<scenario>.txt
`

/** The options, or the usage and what was wrong on stderr and exit 2. */
export function parseBenchOptions(argv: string[]): BenchOptions {
  try {
    return parse(argv)
  } catch (err) {
    process.stderr.write(`npm run bench: ${(err as Error).message}\n\n${USAGE}`)
    process.exit(2)
  }
}

function parse(argv: string[]): BenchOptions {
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
      workers: { type: 'string' },
      pin: { type: 'string' },
      results: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  })
  if (values.help) {
    process.stdout.write(USAGE)
    process.exit(0)
  }
  const quick = values.quick === true
  return {
    ...workerOptions(values.workers, values.pin, values.results),
    quick,
    rounds: Number(values.rounds ?? (quick ? 1 : 3)),
    durationS: Number(values.duration ?? (quick ? 1 : 5)),
    warmupS: Number(values.warmup ?? (quick ? 0 : 2)),
    only: values.only
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    baseline: values.baseline,
    profile: values.profile === true,
    connections: Number(values.connections ?? 50),
    updateReadme: values['update-readme'] === true,
  }
}

/** `--workers`, `--pin` and `--results`, refused with what to write instead when they make no sense. */
function workerOptions(
  workers: string | undefined,
  pin: string | undefined,
  results: string | undefined,
): Pick<BenchOptions, 'workers' | 'workersAsked' | 'pin' | 'results'> {
  const counts = (workers ?? '1,2').split(',').map((s) => s.trim())
  if (counts.some((c) => !/^\d+$/.test(c) || Number(c) < 1 || Number(c) > 256)) {
    throw new Error(`--workers ${JSON.stringify(workers)}: give counts of gateway processes from 1 to 256, comma-separated (--workers 1,2)`)
  }
  if (pin !== undefined && pin !== 'load' && pin !== 'none') {
    throw new Error(`--pin ${JSON.stringify(pin)}: use --pin load (wrk and the stub on the last CPU) or --pin none`)
  }
  if (results !== undefined && !/^[\w.-]+$/.test(results)) {
    throw new Error(`--results ${JSON.stringify(results)}: give a file name without a folder (letters, digits, . _ -): --results workers-latest`)
  }
  return {
    workers: [...new Set(counts.map(Number))],
    workersAsked: workers !== undefined,
    pin: pin === 'none' ? 'none' : 'load',
    results: results ?? 'latest',
  }
}
