/**
 * Usage by partition (`events.partitions`, P): with P > 1 the usage events (UsageRecorded,
 * NotificationsRecorded) of an account go to one of P streams of their own, chosen by the account
 * token, while every other event stays in the one ordered stream. An account's usage is always in
 * the same partition (for a given P), so its order there is the order its producers appended it in.
 *
 * Why P streams rather than a subject mapping `partition(P, token)` into one stream: a stream is
 * one file store and, in a cluster, one Raft group with one leader, and that is what limits the
 * acknowledged publishes a second (one stream took 15,000-18,000); a mapping into one stream would
 * leave that limit where it is. And nats-server 2.9 (Debian's) maps subjects only in the server's
 * account configuration, which the gateway cannot set through JetStream's API; the stream's own
 * subject transforms came with 2.10. The partition function is the one such a mapping computes
 * (FNV-1a, 32 bits, of the token, modulo P), so that an operator's mapping and this agree.
 */

/** Most partitions a log can have. */
export const MAX_PARTITIONS = 64

/** The partition (0 .. P-1) of an account's usage: FNV-1a (32 bits) of its id, modulo P. */
export function partitionOf(accountId: string, partitions: number): number {
  if (partitions <= 1) return 0
  let hash = 0x811c9dc5
  const bytes = Buffer.from(accountId, 'utf8')
  for (const byte of bytes) {
    hash ^= byte
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash % partitions
}

/** The stream of partition `p` of the log's stream `stream`. */
export function partitionStream(stream: string, p: number): string {
  return `${stream}_USAGE_${p}`
}

/**
 * The subject prefix of partition `p`: `<prefix>-usage.<p>`, outside `<prefix>.>` (the main
 * stream's subjects: two streams may not hold one subject), so that `<prefix>-usage.*.>` is every
 * partition's usage and `<prefix>-usage.<p>.>` one partition's.
 */
export function partitionPrefix(prefix: string, p: number): string {
  return `${prefix}-usage.${p}`
}

/** What a partition stream's description says, so that a log opened with another P can tell. */
export function partitionDescription(p: number, partitions: number): string {
  return `tollgate usage partition ${p} of ${partitions}`
}

/** The P a partition stream was made for, read from its description (undefined: not one of ours). */
export function partitionsOfDescription(description: string | undefined): number | undefined {
  const match = /^tollgate usage partition \d+ of (\d+)$/.exec(description ?? '')
  return match ? Number(match[1]) : undefined
}
