import qs from 'qs'

/**
 * qs settings for URL queries (docs/wire-protocol.md, Query strings): `$in` lists of realistic length stay arrays
 * (qs's default arrayLimit of 20 silently turns longer lists into objects), nesting is bounded,
 * and prototype keys are refused. Every leaf stays a string: coercion belongs to the service.
 */
const OPTIONS: qs.IParseOptions = {
  arrayLimit: 1000,
  depth: 6,
  parameterLimit: 1000,
  allowPrototypes: false
}

/**
 * `search` is what follows `?`; express hands null for a URL without one (its `req.query` getter, read by pino-http).
 */
export function parseQueryString(search: string | null): Record<string, unknown> {
  return !search ? {} : qs.parse(search, OPTIONS)
}
