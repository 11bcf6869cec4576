import { startAnvil, type Anvil } from '../../harness/anvil.js'
import { type BusyChain, makeBusyChain } from './busy-chain.js'
import { type FaultProxy, startFaultProxy } from './fault-proxy.js'
import { startTestGateway, type TestGateway } from './gateway.js'

/** Three nodes of one real chain behind proxies: two honest and 150 ms slower, one liar (set its lies). */
export interface LyingNodes {
  anvil: Anvil
  busy: BusyChain
  honest: FaultProxy
  slow: FaultProxy
  liar: FaultProxy
  /** A gateway with eth-1 verifying (`verify`) over the three, and eth-2 over the liar alone, unverified. */
  tg: TestGateway
  apiKey: string
}

/**
 * The set-up of the verification tests: an anvil past its genesis (whose header names the empty
 * state root) with a busy chain (makeBusyChain), three proxies in front of it, the liar the fastest
 * so that it is the node asked first, and a gateway whose eth-2 shows what the liar's answers do
 * unverified.
 * @example const { tg, liar, apiKey } = await lyingNodes(t, 'reads')
 */
export async function lyingNodes(t: { teardown(fn: () => unknown): void }, verify: 'reads' | 'calls'): Promise<LyingNodes> {
  const anvil = await startAnvil()
  t.teardown(() => anvil.stop())
  // Past anvil's genesis first; its safe and finalized blocks are 32 and 64 below the head.
  await anvil.rpc('anvil_mine', ['0x46'])
  const busy = await makeBusyChain(anvil)
  const [honest, slow, liar] = await Promise.all([0, 1, 2].map(() => startFaultProxy(anvil)))
  t.teardown(() => Promise.all([honest, slow, liar].map((p) => p!.close())))
  honest!.set('*', { delayMs: 150 })
  slow!.set('*', { delayMs: 150 })
  const upstreams = [
    { url: honest!.url, name: 'honest', kind: 'full' as const },
    { url: slow!.url, name: 'also-honest', kind: 'full' as const },
    { url: liar!.url, name: 'liar', kind: 'full' as const },
  ]
  const tg = await startTestGateway(t, {
    networks: {
      'eth-1': { chainId: 31337, verify, upstreams },
      'eth-2': { chainId: 31337, upstreams: [upstreams[2]!] },
      // The liar listed first: for the reads no other call has measured the nodes for.
      'eth-3': { chainId: 31337, verify, upstreams: [upstreams[2]!, upstreams[0]!] },
    },
    config: { diagnostics: { responseHeaders: true }, cache: { enabled: false } },
  })
  const { apiKey } = await tg.createKey('tier-3')
  return { anvil, busy, honest: honest!, slow: slow!, liar: liar!, tg, apiKey }
}
