/**
 * A copy of an answer with one field changed by as little as it can be: the last hex digit flipped
 * (same length, so that only the value differs), "0x" given one byte, null given an address. What
 * each verification test alters, so that every check is seen to refuse a one-digit lie.
 * @example verifyHeader(altered(block, 'gasUsed')) // throws HEADER_HASH
 */
export function altered<T extends object>(answer: T, key: keyof T | number): T {
  const copy: any = Array.isArray(answer) ? [...answer] : { ...answer }
  copy[key] = alterHex(copy[key])
  return copy
}

export function alterHex(value: unknown): `0x${string}` {
  if (value === null || value === undefined) return `0x${'11'.repeat(20)}`
  if (typeof value !== 'string' || !value.startsWith('0x')) throw new Error(`not hex: ${JSON.stringify(value)}`)
  if (value === '0x') return '0x01'
  const last = value.at(-1)!
  return `${value.slice(0, -1)}${(Number.parseInt(last, 16) ^ 1).toString(16)}` as `0x${string}`
}
