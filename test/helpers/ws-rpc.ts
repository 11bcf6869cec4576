import { WebSocket } from 'undici'

/**
 * One JSON-RPC call over a fresh WebSocket, straight to a node: anvil answers some malformed
 * calls with different messages over HTTP and over WebSocket, so a node's answer is compared
 * over the transport the gateway used.
 */
export function wsRpc(wsUrl: string, body: object): Promise<any> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl)
    ws.onopen = () => ws.send(JSON.stringify(body))
    ws.onmessage = (m) => {
      resolve(JSON.parse(String(m.data)))
      ws.close()
    }
    ws.onerror = (e) => reject(new Error(`WebSocket to ${wsUrl} failed: ${String((e as { message?: string }).message ?? e.type)}`))
  })
}
