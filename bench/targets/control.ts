import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'
import { createInterface } from 'node:readline'

/**
 * Lets the harness ask a Node target about its own event loop: `eld` on stdin answers one JSON
 * line `{"eldP99Us":…,"eldMaxUs":…,"gcCount":…,"gcTotalMs":…,"gcMaxUs":…}` (event-loop delay since the last `eld`) and starts over.
 * This is how "gzip never blocks the event loop" is measured directly, beside the latency that
 * other clients see (which on 2 shared cores also carries plain CPU contention).
 */
export function answerControlCommands(): void {
  const eld = monitorEventLoopDelay({ resolution: 1 })
  eld.enable()
  // Garbage-collector pauses since the last `eld`: what of the loop's delay the GC explains.
  let gcCount = 0
  let gcTotalMs = 0
  let gcMaxMs = 0
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcCount++
      gcTotalMs += e.duration
      gcMaxMs = Math.max(gcMaxMs, e.duration)
    }
  }).observe({ entryTypes: ['gc'] })
  const lines = createInterface({ input: process.stdin })
  lines.on('line', (line) => {
    if (line.trim() !== 'eld') return
    const gc = { gcCount, gcTotalMs: Math.round(gcTotalMs), gcMaxUs: Math.round(gcMaxMs * 1000) }
    process.stdout.write(JSON.stringify({ eldP99Us: Math.round(eld.percentile(99) / 1000), eldMaxUs: Math.round(eld.max / 1000), ...gc }) + '\n')
    eld.reset()
    gcCount = gcTotalMs = gcMaxMs = 0
  })
  // The harness closing our stdin must not keep us alive nor kill us: SIGTERM does that.
  lines.on('close', () => {})
}
