/**
 * The JSON-RPC objects the checks read, as nodes answer them (hex strings). Only the fields a check
 * reads are named; a node's answer carries more (`size`, `totalDifficulty`, `effectiveGasPrice`...)
 * and those pass through unread, which docs/verified-answers.md says field by field.
 */
import type { Hex } from 'viem'

export type { Hex }

/** A block header as `eth_getBlockByNumber` answers it; the fork fields are present from their fork on. */
export interface RpcHeader {
  hash: Hex
  parentHash: Hex
  sha3Uncles: Hex
  miner: Hex
  stateRoot: Hex
  transactionsRoot: Hex
  receiptsRoot: Hex
  logsBloom: Hex
  difficulty: Hex
  number: Hex
  gasLimit: Hex
  gasUsed: Hex
  timestamp: Hex
  extraData: Hex
  mixHash: Hex
  nonce: Hex
  baseFeePerGas?: Hex
  withdrawalsRoot?: Hex
  blobGasUsed?: Hex
  excessBlobGas?: Hex
  parentBeaconBlockRoot?: Hex
  requestsHash?: Hex
}

export interface RpcAccessListEntry {
  address: Hex
  storageKeys: Hex[]
}

export interface RpcAuthorization {
  chainId: Hex
  address: Hex
  nonce: Hex
  yParity: Hex
  r: Hex
  s: Hex
}

/** A transaction object as `eth_getBlockByNumber(n, true)` or `eth_getTransactionByHash` answers it. */
export interface RpcTransaction {
  hash: Hex
  type?: Hex
  chainId?: Hex
  nonce: Hex
  gas: Hex
  gasPrice?: Hex
  maxFeePerGas?: Hex
  maxPriorityFeePerGas?: Hex
  maxFeePerBlobGas?: Hex
  to: Hex | null
  value: Hex
  input: Hex
  accessList?: RpcAccessListEntry[]
  blobVersionedHashes?: Hex[]
  authorizationList?: RpcAuthorization[]
  v?: Hex
  yParity?: Hex
  r: Hex
  s: Hex
  from?: Hex
  blockHash?: Hex | null
  blockNumber?: Hex | null
  transactionIndex?: Hex | null
}

/** A block as `eth_getBlockByNumber(n, true)` answers it. */
export interface RpcBlock extends RpcHeader {
  transactions: RpcTransaction[] | Hex[]
  withdrawals?: RpcWithdrawal[]
}

export interface RpcWithdrawal {
  index: Hex
  validatorIndex: Hex
  address: Hex
  amount: Hex
}

export interface RpcLog {
  address: Hex
  topics: Hex[]
  data: Hex
  blockHash?: Hex
  blockNumber?: Hex
  transactionHash?: Hex
  transactionIndex?: Hex
  logIndex?: Hex
  removed?: boolean
}

/** A receipt as `eth_getTransactionReceipt` and `eth_getBlockReceipts` answer it. */
export interface RpcReceipt {
  type?: Hex
  /** From Byzantium on; before it, `root` (the state root after the transaction). */
  status?: Hex
  root?: Hex
  cumulativeGasUsed: Hex
  gasUsed?: Hex
  logsBloom: Hex
  logs: RpcLog[]
  transactionHash?: Hex
  transactionIndex?: Hex
  blockHash?: Hex
  blockNumber?: Hex
  from?: Hex
  to?: Hex | null
  contractAddress?: Hex | null
  effectiveGasPrice?: Hex
}

export interface RpcStorageProof {
  key: Hex
  value: Hex
  proof: Hex[]
}

/** An `eth_getProof` answer (EIP-1186). */
export interface RpcAccountProof {
  address: Hex
  balance: Hex
  nonce: Hex
  codeHash: Hex
  storageHash: Hex
  accountProof: Hex[]
  storageProof: RpcStorageProof[]
}
