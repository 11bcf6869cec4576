/**
 * Freeze `value` and everything it holds. Configuration is shared by every part of the
 * gateway: one part changing it at run time would change the behaviour of all the others.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}
