export type Doc = Record<string, unknown>

/**
 * Reads a field; a dotted name ('address.city') is a path into nested objects. Only own properties
 * count, so `toString` or `constructor` never match inherited members, and a path never enters an
 * array ('tags.0' reads as missing), as in the RethinkDB adapter.
 */
export function fieldGetter(field: string): (record: Doc) => unknown {
  if (!field.includes('.')) return (record) => (Object.hasOwn(record, field) ? record[field] : undefined)
  const path = field.split('.')
  return (record) => {
    let value: unknown = record
    for (const key of path) {
      if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, key))
        return undefined
      value = (value as Doc)[key]
    }
    return value
  }
}
