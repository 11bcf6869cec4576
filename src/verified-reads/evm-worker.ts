import { parentPort } from 'node:worker_threads'
import { type RunRequest, runOnSnapshot } from './evm-run.js'

/**
 * A worker thread of the gateway's EVM (EvmWorkers): one run at a time, each answered with its
 * outcome or its failure's words. It asks no node and holds nothing between runs, so ending it
 * mid-run (its wall-clock budget spent) loses nothing. It says when it is ready, so that the
 * loading of its modules is not counted against a run's budget.
 */
// Loaded (the EVM's modules take a few hundred ms to load): a run's budget starts from here.
parentPort!.postMessage({ ready: true })
parentPort!.on('message', async (request: RunRequest) => {
  try {
    parentPort!.postMessage({ ok: true, outcome: await runOnSnapshot(request) })
  } catch (err) {
    parentPort!.postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) })
  }
})
