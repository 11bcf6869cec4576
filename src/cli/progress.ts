import type { Logger } from 'pino'

export interface ProgressOptions {
  /** What the work is, first on the line and in the log message ("replay"). */
  task: string
  /** What is counted ("events"). */
  unit: string
  /** How many there are to do in all. */
  total: number
  /** How many were done before this run began (a resumed replay): they do not count in the rate. */
  start?: number
  /** A terminal (stderr when it is one): one line rewritten in place. */
  terminal?: { write(text: string): unknown }
  /** Off a terminal: a pino line every `logEveryMs`. */
  logger?: Logger
  /** Default 5,000 ms. */
  logEveryMs?: number
  /** Shortest time between two redraws of the terminal line (default 200 ms). */
  redrawMs?: number
  /** ms clock (default Date.now); tests pass a fake one. */
  now?: () => number
}

/** What a progress report says. */
export interface ProgressState {
  done: number
  total: number
  /** Over this run (not counting `start`); 0 until some time has passed. */
  perSecond: number
  /** At that rate; undefined while it is not known. */
  secondsLeft: number | undefined
}

/**
 * Progress of long work for people: on a terminal a live line (done of total, per second, time
 * left), off one (a log file, systemd, CI) the same as a pino line every few seconds, so that a
 * replay of minutes is never silent.
 * @example
 * const progress = new Progress({ task: 'replay', unit: 'events', total, terminal: process.stderr.isTTY ? process.stderr : undefined, logger })
 * progress.update(done) // after each batch
 * progress.finish()
 */
export class Progress {
  readonly #opts: ProgressOptions
  readonly #now: () => number
  readonly #began: number
  #done: number
  #lastDrawn = -Infinity
  #lastLogged: number
  #drawn = false

  constructor(opts: ProgressOptions) {
    this.#opts = opts
    this.#now = opts.now ?? Date.now
    this.#began = this.#now()
    this.#lastLogged = this.#began
    this.#done = opts.start ?? 0
  }

  /** Where things stand. */
  state(): ProgressState {
    const { total, start = 0 } = this.#opts
    const seconds = (this.#now() - this.#began) / 1000
    const perSecond = seconds > 0 ? (this.#done - start) / seconds : 0
    return { done: this.#done, total, perSecond, secondsLeft: perSecond > 0 ? Math.max(0, total - this.#done) / perSecond : undefined }
  }

  /** `done` of the total are done now. */
  update(done: number): void {
    this.#done = done
    const now = this.#now()
    if (this.#opts.terminal !== undefined) {
      if (now - this.#lastDrawn < (this.#opts.redrawMs ?? 200)) return
      this.#lastDrawn = now
      this.#opts.terminal.write(`\r${this.line()}\x1b[K`)
      this.#drawn = true
    } else if (now - this.#lastLogged >= (this.#opts.logEveryMs ?? 5_000)) {
      this.#lastLogged = now
      this.#log()
    }
  }

  /** The work ended (or stopped): the terminal line is drawn a last time and ended. */
  finish(): void {
    if (this.#opts.terminal !== undefined) {
      if (this.#drawn || this.#done > (this.#opts.start ?? 0)) this.#opts.terminal.write(`\r${this.line()}\x1b[K\n`)
    } else this.#log()
  }

  /** The terminal line: `replay: 412,000 of 1,000,000 events (41%), 52,300 events/s, 0:11 left`. */
  line(): string {
    const { task, unit } = this.#opts
    const { done, total, perSecond, secondsLeft } = this.state()
    const percent = total > 0 ? Math.floor((done * 100) / total) : 100
    const left = secondsLeft === undefined ? '' : `, ${clock(secondsLeft)} left`
    return `${task}: ${count(done)} of ${count(total)} ${unit} (${percent}%), ${count(Math.round(perSecond))} ${unit}/s${left}`
  }

  #log(): void {
    const { done, total, perSecond, secondsLeft } = this.state()
    this.#opts.logger?.info(
      { done, total, perSecond: Math.round(perSecond), secondsLeft: secondsLeft === undefined ? null : Math.round(secondsLeft) },
      `${this.#opts.task} progress`,
    )
  }
}

function count(n: number): string {
  return n.toLocaleString('en-US')
}

/** 75 → "1:15", 3725 → "1:02:05". */
function clock(seconds: number): string {
  const s = Math.ceil(seconds)
  const two = (n: number): string => String(n).padStart(2, '0')
  return s >= 3600 ? `${Math.floor(s / 3600)}:${two(Math.floor(s / 60) % 60)}:${two(s % 60)}` : `${Math.floor(s / 60)}:${two(s % 60)}`
}
