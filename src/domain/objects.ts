/** An object that is neither null nor an array: a record, or a nested object inside one (a Date counts). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A record made by an object literal or JSON (prototype Object or null): not a Date, a Map or a class instance. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!isRecord(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}
