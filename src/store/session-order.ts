/** Sessions in the order they end in: by expiry, then by hash (the order of the store's index). */
export function sessionOrder(expiresAt: number, sessionHash: string): string {
  return `${String(expiresAt).padStart(15, '0')}|${sessionHash}`
}
