import type { HttpResponse } from './uws.js'
import type { ResponseState } from './exchanges.js'

/** Largest body read and dropped before refusing a request: past it the connection closes instead. */
export const MAX_REFUSED_BODY = 64 * 1024

/**
 * Read and drop the body, then answer: keeps the connection usable for the client's next request
 * (a body left unread would be taken for the start of the next request). Past `max` bytes it
 * answers at once and the connection is closed with the answer.
 */
export function drainThen(res: HttpResponse, state: DrainedState, max: number, answer: (tooLarge: boolean) => void): void {
  let size = 0
  res.onData((chunk, isLast) => {
    if (state.bodyDone) return
    size += chunk.byteLength
    state.bodyBytes = size
    if (isLast || size > max) {
      state.bodyDone = true
      if (!state.aborted) answer(size > max)
    }
  })
}

/** An exchange whose body is drained: the body time-out reads how far it got, and forgets it once done. */
type DrainedState = ResponseState & { bodyDone?: boolean; bodyBytes?: number }
