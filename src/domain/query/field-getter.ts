export type Doc = Record<string, unknown>

/** Reads a field; a dotted name ('address.city') is a path into nested objects. */
export function fieldGetter(field: string): (record: Doc) => unknown {
  if (!field.includes('.')) return (record) => record[field]
  const path = field.split('.')
  return (record) => {
    let value: unknown = record
    for (const key of path) {
      if (typeof value !== 'object' || value === null) return undefined
      value = (value as Doc)[key]
    }
    return value
  }
}
