import type { UpstreamReply } from '../upstream/pool.js'

/**
 * What one upstream call gave the dispatcher: the node's reply, and whether the immutable-answer
 * cache answered it or stored it. Its own file so that the heavy-call helpers (eth_getLogs
 * splitting) and the caller that uses them both read it without importing each other.
 */
export interface CallOutcome extends UpstreamReply {
  cache?: 'hit' | 'miss'
}
