import { collectDefaultMetrics, Registry } from 'prom-client'

/**
 * A Prometheus registry of its own for one gateway, with prom-client's default process metrics
 * (CPU, memory, event-loop lag, GC, file descriptors). Never prom-client's global registry: a
 * process may run several gateways (the tests do), and each serves only its own figures on its
 * admin listener.
 * @example
 * const registry = gatewayRegistry()
 * const text = await registry.metrics() // Prometheus text format
 */
export function gatewayRegistry(): Registry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  return registry
}
