/**
 * The two kinds of node a network has: full nodes (recent state) and archive nodes (all of it).
 * A word the whole gateway shares (plans, routing, the nodes, usage, events), kept in this small
 * folder at the bottom so that the folders that use it need not reach into one another for it
 * (schemas/node-kind.ts is its schema; test/schemas/derived-types.ts checks the two agree).
 */
export type NodeKind = 'full' | 'archive'
