import pino, { type Logger } from 'pino'

/**
 * pino, level from LOG_LEVEL. Commands whose last stdout line is their JSON answer log to stderr
 * so that `tail -n1` of stdout is always the answer.
 */
export function makeLogger(destination: 'stdout' | 'stderr'): Logger {
  return pino(
    {
      level: process.env.LOG_LEVEL ?? 'info',
      base: { pid: process.pid },
      // Belt and braces: nothing should log a key, but if a request or header object ever is
      // logged, the key fields are removed.
      redact: { paths: ['apiKey', 'key', '*.apiKey', 'req.headers.authorization', 'headers.authorization'], remove: true },
    },
    pino.destination({ fd: destination === 'stdout' ? 1 : 2, sync: true }),
  )
}
