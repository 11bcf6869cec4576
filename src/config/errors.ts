/** One thing wrong in a configuration file: where, and what was expected. */
export interface ConfigProblem {
  /** JSON pointer of the field, e.g. `/networks/eth-1/upstreams/0/kind`; '' for the file as a whole. */
  path: string
  message: string
}

/**
 * A configuration the gateway refuses to start with. The message names the file, the field
 * and what was expected, one problem per line, e.g.
 * `config.json: /networks/eth-1/upstreams/0/kind must be one of "full", "archive"`.
 */
export class ConfigError extends Error {
  override name = 'ConfigError'
  readonly source: string
  readonly problems: readonly ConfigProblem[]

  constructor(source: string, problems: readonly ConfigProblem[], options?: { cause?: unknown }) {
    super(problems.map((p) => (p.path === '' ? `${source}: ${p.message}` : `${source}: ${p.path} ${p.message}`)).join('\n'), options)
    this.source = source
    this.problems = problems
  }
}
