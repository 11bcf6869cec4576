import WebSocket from 'ws'

/**
 * The V8 inspector of a child process started with `--inspect=127.0.0.1:<port>`, for tests that
 * measure what a process keeps: `heapAfterGc()` runs a full garbage collection in the process and
 * then reads its memory, so that what is measured is what is still referenced, not what the
 * collector has not come to yet (when it runs depends on the speed of the machine).
 */
export interface Inspector {
  /** process.memoryUsage() of the process, in bytes, right after a full collection. */
  heapAfterGc(): Promise<NodeJS.MemoryUsage>
  close(): Promise<void>
}

/**
 * Connect to the inspector listening on `port` (the first target it lists).
 * @example
 * const inspector = await connectInspector(port); const { heapUsed } = await inspector.heapAfterGc()
 */
export async function connectInspector(port: number): Promise<Inspector> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>
  const url = targets[0]?.webSocketDebuggerUrl
  if (url === undefined) throw new Error(`no inspector target on port ${port}`)
  const ws = new WebSocket(url)
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve())
    ws.once('error', reject)
  })
  let nextId = 1
  const pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>()
  ws.on('message', (data) => {
    const msg = JSON.parse(String(data)) as { id?: number; result?: any; error?: { message: string } }
    const p = msg.id === undefined ? undefined : pending.get(msg.id)
    if (p === undefined) return
    pending.delete(msg.id!)
    if (msg.error) p.reject(new Error(msg.error.message))
    else p.resolve(msg.result)
  })
  const send = (method: string, params: Record<string, unknown> = {}): Promise<any> =>
    new Promise((resolve, reject) => {
      const id = nextId++
      pending.set(id, { resolve, reject })
      ws.send(JSON.stringify({ id, method, params }))
    })
  return {
    async heapAfterGc() {
      await send('HeapProfiler.collectGarbage')
      const out = await send('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true })
      return JSON.parse(out.result.value) as NodeJS.MemoryUsage
    },
    async close() {
      if (ws.readyState === WebSocket.CLOSED) return
      await new Promise<void>((resolve) => {
        ws.once('close', () => resolve())
        ws.close()
      })
    },
  }
}
