/** The actor runtime and the actors' pure logic. Imports nothing from src/. */
export { type Clock, systemClock, FakeClock } from './runtime/clock.js'
export { Mailbox, type MailboxHandler, type MailboxOptions, type MailboxStatus } from './runtime/mailbox.js'
export { ActorRegistry, type ActorRegistryOptions } from './runtime/registry.js'
export { type TokenBucket, type TakeResult, fullBucket, refill, take } from './rate/token-bucket.js'
export {
  type CallKind,
  type KeyLimits,
  type KeyState,
  type KeyCommand,
  type KeyDecision,
  type AdmitCommand,
  type AdmitDecision,
  type InitialKeyStateInput,
  burstOf,
  initialKeyState,
  decide,
  withLimits,
} from './key/decide.js'
export {
  type WsKeyLimits,
  type WsKeyState,
  type WsCommand,
  type WsDecision,
  DEFAULT_WS_KEY_LIMITS,
  initialWsState,
  decideWs,
  withWsLimits,
} from './key/ws-limits.js'
export { KeyActor } from './key/key-actor.js'
