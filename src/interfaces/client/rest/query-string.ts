/**
 * Encodes a query exactly like `qs.stringify` with its defaults (bracket keys, indexed arrays,
 * RFC 3986 percent-encoding, `null` → `key=`, `undefined` and empty arrays/objects skipped, dates as
 * ISO strings), so the server's qs parser gets back the same object with string leaves. Hand-written
 * because client code stays free of npm packages; pass `stringify: qs.stringify` in the options to
 * use qs itself.
 */
export function stringifyQuery(query: Record<string, unknown>): string {
  const parts: string[] = []
  const add = (key: string, raw: unknown): void => {
    const value = raw instanceof Date ? raw.toISOString() : raw
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return
    if (value === null) parts.push(`${encode(key)}=`)
    else if (Array.isArray(value)) value.forEach((item, index) => add(`${key}[${index}]`, item))
    else if (typeof value === 'object')
      for (const name of Object.keys(value)) add(`${key}[${name}]`, (value as Record<string, unknown>)[name])
    else parts.push(`${encode(key)}=${encode(String(value))}`)
  }
  for (const key of Object.keys(query)) add(key, query[key])
  return parts.join('&')
}

/** encodeURIComponent leaves `!'()*` alone; qs (RFC 3986) encodes them. */
function encode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
}
