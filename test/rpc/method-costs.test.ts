import t from 'tap'
import { MethodRules, methodRule } from '../../src/rpc/method-policy.js'
import { METHODS, UNLISTED_COST } from '../../src/rpc/method-table.js'

const costOf = (rules: MethodRules | undefined, method: string, transport: 'http' | 'ws' = 'http'): number | undefined => {
  const rule = rules === undefined ? methodRule(method, transport) : rules.rule(method, transport)
  return rule.ok ? rule.spec.cost : undefined
}

t.test('every method of the table has a whole cost; heavy calls and traces cost more than reads', async (t) => {
  for (const [method, spec] of Object.entries(METHODS)) t.ok(Number.isInteger(spec.cost) && spec.cost >= 0, `${method}: ${spec.cost}`)
  const cheapestHeavy = Math.min(...Object.values(METHODS).flatMap((s) => (s.heavy === true ? [s.cost] : [])))
  for (const read of ['eth_blockNumber', 'eth_getBalance', 'eth_call', 'eth_getTransactionReceipt']) t.ok(METHODS[read].cost < cheapestHeavy, read)
  t.ok(METHODS.debug_traceTransaction.cost > METHODS.eth_getBalance.cost)
  t.equal(costOf(undefined, 'eth_somethingNew'), undefined, 'a method not in the table is not served unless a network forwards it')
  const forwarding = new MethodRules({}, { 'eth-1': ['eth_somethingNew', 'trace_*'] })
  const forwardedCost = (method: string) => {
    const rule = forwarding.rule(method, 'http', 'eth-1')
    return rule.ok ? rule.spec.cost : undefined
  }
  t.equal(forwardedCost('eth_somethingNew'), UNLISTED_COST, 'forwarded, it costs the cautious default')
  t.equal(forwardedCost('trace_somethingNew'), UNLISTED_COST)
  t.ok(UNLISTED_COST >= cheapestHeavy, 'as much as a heavy call at least')
})

t.test('configured costs are on the rules of that gateway only, both transports', async (t) => {
  const rules = new MethodRules({ eth_call: 30, eth_somethingNew: 7, eth_subscribe: 99 }, { 'eth-1': ['eth_somethingNew'] })
  t.equal(costOf(rules, 'eth_call'), 30)
  t.equal(costOf(rules, 'eth_call', 'ws'), 30)
  const forwarded = rules.rule('eth_somethingNew', 'http', 'eth-1')
  t.equal(forwarded.ok && forwarded.spec.cost, 7, 'a forwarded method takes its configured cost')
  t.equal(costOf(rules, 'eth_somethingNew'), undefined, 'on no network: refused')
  t.equal(costOf(rules, 'eth_subscribe', 'ws'), 99)
  t.equal(costOf(rules, 'eth_subscribe', 'http'), undefined, 'still refused over HTTP')
  t.equal(costOf(rules, 'eth_getBalance'), METHODS.eth_getBalance.cost, 'the others keep the table’s')
  t.equal(costOf(undefined, 'eth_call'), METHODS.eth_call.cost, 'the default rules are untouched')
  t.equal(costOf(new MethodRules(), 'eth_call'), METHODS.eth_call.cost)
  const a = rules.rule('eth_call')
  t.equal(rules.rule('eth_call'), a, 'looked up once: the same rule object each call')
  t.ok(a.ok && a.spec.needs === 'any' && a.spec.block !== undefined, 'the rest of the entry is kept')
})
