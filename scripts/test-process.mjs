// Loaded first in each test file's process (.taprc `node-arg`).

// tap's process tracker (@tapjs/processinfo, for coverage, which this suite does not collect:
// .taprc) puts itself into every node process below a test: through NODE_OPTIONS, and by a hook
// on every spawn (the process-on-spawn package) that adds it back to the child's environment.
// Each gateway and command-line process the tests start (a few hundred a run) then ran a
// module-loader hook on a thread of its own over every file it loaded: test/cli/usage (about 15
// command-line runs and a gateway) took 17.1-17.6 s of CPU with it and 10.3-10.7 s without
// (alternating, two runs each). The test's own process keeps it (tap starts it so); the processes
// it starts do without. Should a later tap track children another way, they are tracked again:
// slower, not wrong.
const onSpawn = globalThis[Symbol.for('process-on-spawn@*:singletonId')]
if (onSpawn?.listeners) onSpawn.listeners.length = 0
const kept = (process.env.NODE_OPTIONS ?? '').split(/\s+/).filter((option) => option !== '' && !option.includes('@tapjs/processinfo'))
if (kept.length > 0) process.env.NODE_OPTIONS = kept.join(' ')
else delete process.env.NODE_OPTIONS
for (const name of Object.keys(process.env)) if (name.startsWith('_TAPJS_PROCESSINFO_')) delete process.env[name]

// The suite runs built JavaScript (scripts/test.mjs); a test named by its .ts path (`npx tap
// test/ws/limits.test.ts`) runs through tsx instead, registered here for that file only: the
// built files pay nothing for it.
if (process.argv[1]?.endsWith('.ts')) await import('tsx')
