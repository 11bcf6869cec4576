/** An answer of `bytes` characters that says which one it is (shared with the child process). */
export function answerOf(i: number, bytes: number): string {
  const head = `{"jsonrpc":"2.0","id":1,"result":"${i}:`
  return head + 'a'.repeat(Math.max(0, bytes - head.length - 2)) + '"}'
}
