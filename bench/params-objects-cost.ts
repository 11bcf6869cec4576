/**
 * What the check of a call's params objects (src/rpc/params-objects.ts) costs against reading the
 * call at all: ns per call of paramsRefusal alone and of parseRpcBody (which runs it), for an
 * eth_call with a transaction object and a block tag, an eth_getLogs filter, and an eth_getBalance
 * (flat params: not looked at). Rounds interleaved, medians. In-process, one core: the figure of
 * the check itself, which a whole-gateway run (bench:paired --only calls) cannot resolve from its
 * noise on a shared machine.
 * Run: node --import tsx bench/params-objects-cost.ts [--rounds 9] [--calls 200000]
 */
import { parseArgs } from 'node:util'
import { paramsRefusal } from '../src/rpc/params-objects.js'
import { parseRpcBody } from '../src/rpc/parse.js'
import { median } from './lib/measure.js'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '9' }, calls: { type: 'string', default: '200000' } } })
const rounds = Number(values.rounds)
const calls = Number(values.calls)

const CASES = {
  eth_call: [{ from: `0x${'0'.repeat(39)}1`, to: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', data: `0x70a08231${'0'.repeat(60)}1ecf` }, 'latest'],
  eth_getLogs: [{ address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', topics: [`0x${'dd'.repeat(32)}`], fromBlock: '0x100', toBlock: '0x200' }],
  eth_getBalance: [`0x${'0'.repeat(36)}1ecf`, 'latest'],
} as const

let sink = 0
function nsPer(run: () => unknown): number {
  const start = process.hrtime.bigint()
  for (let i = 0; i < calls; i++) if (run() !== undefined) sink++
  return Number(process.hrtime.bigint() - start) / calls
}

for (const [method, params] of Object.entries(CASES)) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params })
  const check: number[] = []
  const parse: number[] = []
  for (let r = 0; r < rounds; r++) {
    check.push(nsPer(() => paramsRefusal(method, params)))
    parse.push(nsPer(() => (parseRpcBody(body).kind === 'single' ? undefined : 1)))
  }
  const c = median(check)
  const p = median(parse)
  const note = method === 'eth_getBalance' ? ' (flat params: the parse reads them without it)' : ''
  process.stdout.write(
    `${method}${note}: check ${c.toFixed(0)} ns, parse with it ${p.toFixed(0)} ns per call (${((100 * c) / p).toFixed(1)}% of reading the call)\n`,
  )
}
if (sink > 0) process.stdout.write(`(${sink} refusals: none expected)\n`)
