/**
 * Whether `s` is `0x` and 1 to `maxDigits` hex digits (what /^0x[0-9a-fA-F]{1,maxDigits}$/
 * matches), read without a regular expression: it runs per call of a batch (routing, the cache's
 * rules), where most block parameters are tags (`latest`), told apart by their first character.
 * @example
 * isHexQuantity('0x1b4', 16) // true
 * isHexQuantity('latest', 16) // false
 */
export function isHexQuantity(s: string, maxDigits: number): boolean {
  const n = s.length
  if (n < 3 || n > maxDigits + 2 || s.charCodeAt(0) !== 48 /* 0 */ || s.charCodeAt(1) !== 120 /* x */) return false
  for (let i = 2; i < n; i++) {
    const c = s.charCodeAt(i)
    // 0-9, A-F, a-f
    if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102))) return false
  }
  return true
}
