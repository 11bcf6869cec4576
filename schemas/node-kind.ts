import type { SchemaOptions } from '@sinclair/typebox'
import { StringEnum } from './json-schema.js'

/** A node's kind: a full node (recent state), or an archive node (historical state, trace_*). */
export const NodeKind = (options: SchemaOptions = {}) => StringEnum(['full', 'archive'], options)
