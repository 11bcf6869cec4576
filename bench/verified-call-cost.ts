// What running a verified eth_call's EVM in a worker thread costs an ordinary small call, beside the
// same run on the event loop, in one run (paired: rounds alternate, both loaded alike by whatever
// else runs on the machine). The run is an ERC-20 balanceOf on the state a verified eth_call
// proves (the token's account, code and balance slot, the sender, the miner), as ProvenRun sends
// it to the runner each round. Measured per run: the wall time, the event loop's busy time (what
// other tenants' calls wait behind: performance.eventLoopUtilization of the main thread), and the
// process's CPU (both threads: process.cpuUsage). One run at a time, and eight in flight.
// Run: node --import tsx bench/verified-call-cost.ts [rounds=10] [runsPerRound=300], after a build
// for tests (npm test builds dist-test/): the worker thread runs built code (a thread does not take
// tsx's loader), so both sides run the build.
import { performance } from 'node:perf_hooks'
import { encodeFunctionData, erc20Abi } from 'viem'
import { receiptOf, startAnvil } from '../harness/anvil.js'
import type { ProvenSnapshot, RunJob, SnapshotAccount } from '../src/verified-reads/evm-run.js'
import type { EvmRunner } from '../src/verified-reads/evm-workers.js'
import type { Hex } from '../src/proofs/rpc-shapes.js'
import { tokenInitCode } from '../test/helpers/contracts.js'

const { EvmWorkers, INLINE_EVM } = (await import(
  new URL('../dist-test/src/verified-reads/evm-workers.js', import.meta.url).href
)) as typeof import('../src/verified-reads/evm-workers.js')
const ROUNDS = Number(process.argv[2] ?? 10)
const RUNS = Number(process.argv[3] ?? 300)

const anvil = await startAnvil()
try {
  const [owner] = (await anvil.rpc('eth_accounts')).result as Hex[]
  const sent = await anvil.rpc('eth_sendTransaction', [{ from: owner, data: tokenInitCode(owner!) }])
  const token = (await receiptOf(anvil, sent.result)).contractAddress.toLowerCase() as Hex
  const block = (await anvil.rpc('eth_getBlockByNumber', ['latest', false])).result
  const accountOf = async (address: Hex): Promise<SnapshotAccount | null> => {
    const p = (await anvil.rpc('eth_getProof', [address, [], 'latest'])).result
    const code = (await anvil.rpc('eth_getCode', [address, 'latest'])).result as Hex
    return { nonce: BigInt(p.nonce), balance: BigInt(p.balance), storageHash: p.storageHash, codeHash: p.codeHash, code }
  }
  const snapshot: ProvenSnapshot = {
    chainId: 31337,
    accounts: new Map(),
    storage: new Map(),
    hashes: new Map(),
    block: {
      number: BigInt(block.number),
      coinbase: block.miner.toLowerCase(),
      timestamp: BigInt(block.timestamp),
      difficulty: BigInt(block.difficulty ?? '0x0'),
      prevRandao: block.mixHash,
      gasLimit: BigInt(block.gasLimit),
      baseFeePerGas: block.baseFeePerGas === undefined ? undefined : BigInt(block.baseFeePerGas),
    },
  }
  for (const a of [owner!.toLowerCase() as Hex, token, snapshot.block.coinbase]) snapshot.accounts.set(a, await accountOf(a))
  const job: RunJob = {
    type: 'call',
    tx: {
      from: owner!.toLowerCase() as Hex,
      to: token,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [owner!] }),
      value: 0n,
      accessList: [],
    },
    gas: 30_000_000n,
  }
  // The slots the run reads, proven as a verified call proves them (here read from anvil).
  const first = await INLINE_EVM.run({ snapshot, job })
  for (const [address, slots] of first.missing) {
    const values = new Map<string, bigint>()
    for (const slot of slots) values.set(slot, BigInt((await anvil.rpc('eth_getStorageAt', [address, slot, 'latest'])).result))
    snapshot.storage.set(address, values)
  }
  const check = await INLINE_EVM.run({ snapshot, job })
  if (check.missing.size > 0 || check.end !== 'returned')
    throw new Error(`the run is not a whole small call: ${JSON.stringify(check, (_, v) => (typeof v === 'bigint' ? String(v) : v))}`)

  const workers = new EvmWorkers({ size: 2, timeoutMs: 5_000 })
  workers.warm()
  // Warm both: the threads loaded, the EVM's code compiled on each side.
  for (let i = 0; i < 200; i++) await Promise.all([workers.run({ snapshot, job }), INLINE_EVM.run({ snapshot, job })])

  const round = async (runner: EvmRunner, inFlight: number) => {
    const elu = performance.eventLoopUtilization()
    const cpu = process.cpuUsage()
    const started = performance.now()
    let left = RUNS
    const client = async () => {
      while (left-- > 0) await runner.run({ snapshot, job })
    }
    await Promise.all(Array.from({ length: inFlight }, client))
    const wallMs = performance.now() - started
    const used = process.cpuUsage(cpu)
    const busy = performance.eventLoopUtilization(elu)
    return { wallMicros: (wallMs * 1000) / RUNS, loopBusyMicros: (busy.active * 1000) / RUNS, cpuMicros: (used.user + used.system) / RUNS }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  for (const inFlight of [1, 8]) {
    const rounds = { inline: [] as Awaited<ReturnType<typeof round>>[], worker: [] as Awaited<ReturnType<typeof round>>[] }
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? (['inline', 'worker'] as const) : (['worker', 'inline'] as const)
      for (const which of order) rounds[which].push(await round(which === 'inline' ? INLINE_EVM : workers, inFlight))
    }
    const of = (rs: Awaited<ReturnType<typeof round>>[]) => ({
      wallMicrosPerRun: Math.round(median(rs.map((r) => r.wallMicros))),
      loopBusyMicrosPerRun: Math.round(median(rs.map((r) => r.loopBusyMicros))),
      cpuMicrosPerRun: Math.round(median(rs.map((r) => r.cpuMicros))),
    })
    const inline = of(rounds.inline)
    const worker = of(rounds.worker)
    const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100
    console.log(
      JSON.stringify({
        scenario: 'a verified eth_call’s EVM run: ERC-20 balanceOf on its proven state',
        rounds: ROUNDS,
        runsPerRound: RUNS,
        inFlight,
        gasUsed: String(check.gasUsed),
        inline,
        worker,
        wallRatio: ratio(worker.wallMicrosPerRun, inline.wallMicrosPerRun),
        loopBusyRatio: ratio(worker.loopBusyMicrosPerRun, inline.loopBusyMicrosPerRun),
        cpuRatio: ratio(worker.cpuMicrosPerRun, inline.cpuMicrosPerRun),
      }),
    )
  }
  await workers.close()
} finally {
  await anvil.stop()
}
