import { readFileSync } from 'node:fs'

/** The first word of the title every tollgate command gives its process. */
const TITLE_WORD = 'tollgate'

/**
 * Name this process after the command it runs (`tollgate start --config /etc/tollgate.json`) in place
 * of `node /…/dist/src/cli/main.js start …`: what `ps` shows, and what `tollgate reload` reads in
 * /proc/<pid>/cmdline before it signals the pid a data folder's lock file names (see
 * tollgateCommandLine). The title fits: Linux lends it the space of the original arguments, which
 * held node's path and the script's beside these same words. process.argv keeps the original (the
 * supervisor forks its workers from it).
 * @example
 * nameProcess(['start', '--config', 'tollgate.json']) // ps: "tollgate start --config tollgate.json"
 */
export function nameProcess(args: readonly string[]): void {
  process.title = [TITLE_WORD, ...args].join(' ')
}

/** What /proc says process `pid` runs, and whether that is a process nameProcess named. */
export interface ProcessCommandLine {
  /** The command line as `ps` shows it (arguments joined by spaces); empty when /proc has none. */
  text: string
  tollgate: boolean
}

/**
 * The command line of process `pid`, and whether it is a tollgate command's (its first argument is
 * a title starting "tollgate ", which only a process that rewrote its arguments has: `node
 * main.js`, `sleep 600`, a shell, even a binary called tollgate, all start otherwise).
 * Undefined when there is no such process or /proc is not readable.
 * @example
 * tollgateCommandLine(process.pid) // { text: 'tollgate start --config …', tollgate: true } once named
 */
export function tollgateCommandLine(pid: number): ProcessCommandLine | undefined {
  let raw: string
  try {
    raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
  } catch {
    return undefined
  }
  const args = raw.split('\0').filter((a) => a !== '')
  return { text: args.join(' '), tollgate: args[0]?.startsWith(`${TITLE_WORD} `) === true }
}
