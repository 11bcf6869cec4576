import { MESSAGES } from '../errors/messages.js'
import { ERRORS } from '../errors/registry.js'
import { knownMembers, strayMember, type KnownMembers } from './member-names.js'
import { METHODS } from './method-table.js'

/**
 * The objects in a call's params that the gateway reads (a transaction object's `to`, a logs
 * filter's `address` and bounds, a block named as an EIP-1898 object), checked when the call is
 * parsed, before a key rule, the router or the charge reads them:
 * - a member whose name equals one the node reads ignoring case without being it (`TO`,
 *   `Address`, `FromBlock`) is refused: a node written in Go would read it where the gateway did
 *   not (src/rpc/member-names.ts);
 * - a transaction object whose `data` and `input` differ is refused: nodes run one or the other;
 * - a logs filter's `fromBlock` or `toBlock` that is an object (`{"blockHash":…}`) is refused: a
 *   filter names one block by hash with its own `blockHash`, and a bound the node reads as a hash
 *   is a block the gateway cannot measure or trust by number.
 * Params that are a flat list of strings (eth_getBalance, eth_getBlockByNumber…) hold no object
 * and cost a Map lookup and a type check per param named.
 */

/** The members of geth's TransactionArgs (internal/ethapi), with the `type` other clients read. */
const CALL = knownMembers('transaction object', [
  'from',
  'to',
  'gas',
  'gasPrice',
  'maxFeePerGas',
  'maxPriorityFeePerGas',
  'maxFeePerBlobGas',
  'value',
  'nonce',
  'data',
  'input',
  'accessList',
  'chainId',
  'type',
  'blobVersionedHashes',
  'blobs',
  'commitments',
  'proofs',
  'authorizationList',
])
/** An access list's entries, which a verified call proves before it runs. */
const ACCESS_TUPLE = knownMembers('access list entry', ['address', 'storageKeys'])
/** geth's FilterCriteria (eth/filters), for eth_getLogs, eth_newFilter and a logs subscription. */
const FILTER = knownMembers('logs filter', ['fromBlock', 'toBlock', 'address', 'topics', 'blockHash'])
/** geth's BlockNumberOrHash (rpc/types.go): a block named by number or hash (EIP-1898). */
const BLOCK = knownMembers('block object', ['blockNumber', 'blockHash', 'requireCanonical'])

/** Where a method's params hold the objects above. */
interface ParamObjects {
  readonly call?: number
  readonly block?: number
  readonly filter?: number
}

const CALL_AT_0 = new Set(['eth_call', 'eth_estimateGas', 'eth_createAccessList', 'eth_fillTransaction', 'debug_traceCall', 'trace_call'])

const OBJECTS_OF = new Map<string, ParamObjects>()
for (const [method, spec] of Object.entries(METHODS)) {
  const call = CALL_AT_0.has(method) ? 0 : undefined
  const block = spec.block !== undefined && 'at' in spec.block ? spec.block.at : undefined
  const filter = spec.block !== undefined && 'filter' in spec.block ? 0 : method === 'eth_newFilter' ? 0 : undefined
  if (call !== undefined || block !== undefined || filter !== undefined) OBJECTS_OF.set(method, Object.freeze({ call, block, filter }))
}

/**
 * Calls refused by these checks since start, by error code, for /metrics
 * (tollgate_params_refused_total): counted where a refusal is answered (src/rpc/parse.ts), as
 * the common layout hands such a call to the general reading, which refuses it.
 */
export const paramsRefused: Record<ParamsRefusal['code'], number> = { PARAMS_MEMBER_CASE: 0, CALL_DATA_AMBIGUOUS: 0, LOGS_BOUND_OBJECT: 0 }

export interface ParamsRefusal {
  readonly code: 'PARAMS_MEMBER_CASE' | 'CALL_DATA_AMBIGUOUS' | 'LOGS_BOUND_OBJECT'
  readonly rpc: number
  readonly message: string
}

/**
 * Why a call's params are refused before anything reads them, or undefined. Pure: counting is the caller's.
 * @example
 * paramsRefusal('eth_call', [{ to: '0xA…', TO: '0xB…' }, 'latest'])
 * // { code: 'PARAMS_MEMBER_CASE', rpc: -32602, message: 'Invalid params: eth_call's transaction object has a member "TO" …' }
 */
export function paramsRefusal(method: string, params: unknown): ParamsRefusal | undefined {
  if (!Array.isArray(params) || params.length === 0) return undefined
  if (method === 'eth_subscribe') return params[0] === 'logs' && isObject(params[1]) ? filterRefusal(method, params[1]) : undefined
  const at = OBJECTS_OF.get(method)
  if (at === undefined) return undefined
  if (at.call !== undefined) {
    const tx = params[at.call]
    if (isObject(tx)) {
      const r = membersRefusal(method, tx, CALL) ?? callDataRefusal(method, tx as { data?: unknown; input?: unknown })
      if (r !== undefined) return r
      const list = (tx as { accessList?: unknown }).accessList
      if (Array.isArray(list)) {
        for (const entry of list) {
          const e = isObject(entry) ? membersRefusal(method, entry, ACCESS_TUPLE) : undefined
          if (e !== undefined) return e
        }
      }
    }
  }
  if (at.block !== undefined) {
    const block = params[at.block]
    if (isObject(block)) {
      const r = membersRefusal(method, block, BLOCK)
      if (r !== undefined) return r
    }
  }
  if (at.filter !== undefined) {
    const filter = params[at.filter]
    if (isObject(filter)) return filterRefusal(method, filter)
  }
  return undefined
}

/**
 * `data` and `input` that differ: geth refuses the call, reth and anvil run `input`, and a gateway
 * that runs `data` (a verified call) would judge an honest node by a call it never ran.
 */
function callDataRefusal(method: string, tx: { data?: unknown; input?: unknown }): ParamsRefusal | undefined {
  const { data, input } = tx
  if (data === undefined || input === undefined || data === null || input === null) return undefined
  // geth compares the bytes: hex in another case is the same call data.
  if (data === input || (typeof data === 'string' && typeof input === 'string' && data.toLowerCase() === input.toLowerCase())) return undefined
  return {
    code: 'CALL_DATA_AMBIGUOUS',
    rpc: ERRORS.CALL_DATA_AMBIGUOUS.rpc,
    message: MESSAGES.CALL_DATA_TWICE.text({ method }),
  }
}

function filterRefusal(method: string, filter: object): ParamsRefusal | undefined {
  const r = membersRefusal(method, filter, FILTER)
  if (r !== undefined) return r
  for (const bound of ['fromBlock', 'toBlock'] as const) {
    const value = (filter as Record<string, unknown>)[bound]
    if (isObject(value)) {
      return {
        code: 'LOGS_BOUND_OBJECT',
        rpc: ERRORS.LOGS_BOUND_OBJECT.rpc,
        message: MESSAGES.LOGS_BOUND_IS_OBJECT.text({ method, bound, value }),
      }
    }
  }
  return undefined
}

function membersRefusal(method: string, object: object, known: KnownMembers): ParamsRefusal | undefined {
  const stray = strayMember(object, known)
  if (stray === undefined) return undefined
  return {
    code: 'PARAMS_MEMBER_CASE',
    rpc: ERRORS.PARAMS_MEMBER_CASE.rpc,
    message: MESSAGES.MEMBER_IN_OTHER_CASE.text({ method, what: known.what, name: stray.name, canonical: stray.canonical }),
  }
}

function isObject(value: unknown): value is object {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
