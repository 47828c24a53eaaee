/**
 * How deeply data and query values may nest. Every layer walks them recursively (copies, equality,
 * JSON encoding), so a body of 100 kB of `[[[[…` would otherwise overflow the stack as a 500 — or be
 * stored and break every later read of it. Real records are nowhere near this deep.
 */
export const MAX_NESTING_DEPTH = 64

/** True when `value` has objects/arrays nested more than `limit` levels deep (stops at the first). */
export function nestedDeeperThan(value: unknown, limit = MAX_NESTING_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false
  if (limit === 0) return true
  if (Array.isArray(value)) return value.some((item) => nestedDeeperThan(item, limit - 1))
  for (const key in value) {
    if (Object.hasOwn(value, key) && nestedDeeperThan((value as Record<string, unknown>)[key], limit - 1)) return true
  }
  return false
}
