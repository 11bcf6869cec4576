import { randomBytes } from 'node:crypto'
import { startTestGateway, type TestGateway, type TestGatewayOptions } from './gateway.js'

/**
 * Several gateways in this process on one JetStream stream of `nats` (a new one): a fleet without
 * the processes, whose instances share the event log and each key's limits, and whose parts a test
 * can read (`gateways[i].gateway.store`). They start one after the other, so that the first makes
 * the stream. The fleet of `tollgate start` processes, as an operator runs one, is startFleet
 * (./fleet.ts).
 * @example
 * const [a, b] = await startInProcessFleet(t, { instances: 2, nats: nats.url, networks })
 */
export async function startInProcessFleet(
  t: { teardown(fn: () => unknown): void },
  opts: Omit<TestGatewayOptions, 'nats' | 'stream'> & { instances: number; nats: string },
): Promise<TestGateway[]> {
  const { instances, ...options } = opts
  const stream = `P${randomBytes(4).toString('hex')}`
  const gateways: TestGateway[] = []
  for (let i = 0; i < instances; i++) gateways.push(await startTestGateway(t, { ...options, stream }))
  return gateways
}
