import { parseArgs, type ParseArgsConfig } from 'node:util'
import { UsageError } from './errors.js'

/** parseArgs with strict checking and an error message that names the command. */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(command: string, args: string[], options: T) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values
  } catch (err) {
    throw new UsageError(`tollgate ${command}: ${(err as Error).message}`)
  }
}

export function required(command: string, name: string, value: string | boolean | undefined): string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`tollgate ${command}: --${name} is required`)
  return value
}
