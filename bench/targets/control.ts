import { monitorEventLoopDelay } from 'node:perf_hooks'
import { createInterface } from 'node:readline'

/**
 * Lets the harness ask a Node target about its own event loop: `eld` on stdin answers one JSON
 * line `{"eldP99Us":…,"eldMaxUs":…}` (event-loop delay since the last `eld`) and starts over.
 * This is how "gzip never blocks the event loop" is measured directly, beside the latency that
 * other clients see (which on 2 shared cores also carries plain CPU contention).
 */
export function answerControlCommands(): void {
  const eld = monitorEventLoopDelay({ resolution: 1 })
  eld.enable()
  const lines = createInterface({ input: process.stdin })
  lines.on('line', (line) => {
    if (line.trim() !== 'eld') return
    process.stdout.write(JSON.stringify({ eldP99Us: Math.round(eld.percentile(99) / 1000), eldMaxUs: Math.round(eld.max / 1000) }) + '\n')
    eld.reset()
  })
  // The harness closing our stdin must not keep us alive nor kill us: SIGTERM does that.
  lines.on('close', () => {})
}
