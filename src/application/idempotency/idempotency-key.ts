import { BadRequest } from '../../domain/errors/errors.js'

/** The longest key accepted, in characters (issue 40; the draft sets no bound). */
export const MAX_KEY_LENGTH = 255

/** RFC 9110 `tchar`: what a bare (unquoted) key may hold. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** RFC 8941 sf-string content: printable ASCII, with `"` and `\` escaped by a backslash. */
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/

/**
 * The key of an `Idempotency-Key` header (draft-ietf-httpapi-idempotency-key-header): an RFC 8941 sf-string, i.e.
 * a quoted string (`"8e03978e-40d5-43e8-bc93-6894a57f9324"`), or — as clients that set the header to a bare UUID
 * send it — an RFC 9110 token (`8e03978e-40d5-43e8-bc93-6894a57f9324`). The key is what is between the quotes,
 * unescaped; 1 to 255 characters. Anything else (a repeated header, a list, parameters, control characters) is a 400.
 */
export function parseIdempotencyKey(value: unknown, origin = 'Idempotency-Key'): string {
  if (typeof value !== 'string') throw new BadRequest(`${origin} must be one string (a quoted string or a token)`)
  const text = value.trim()
  const quoted = SF_STRING.exec(text)
  const key = quoted ? quoted[1]!.replace(/\\(["\\])/g, '$1') : TOKEN.test(text) ? text : undefined
  if (key === undefined)
    throw new BadRequest(
      `${origin} must be a quoted string of printable ASCII characters (draft-ietf-httpapi-idempotency-key-header) or a bare token`
    )
  if (key.length === 0 || key.length > MAX_KEY_LENGTH)
    throw new BadRequest(`${origin} must have 1 to ${MAX_KEY_LENGTH} characters (got ${key.length})`)
  return key
}
