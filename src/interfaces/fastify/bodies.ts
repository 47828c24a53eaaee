import type { IncomingHttpHeaders } from 'node:http'
import type { Readable } from 'node:stream'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import qs from 'qs'
import { BadRequest, PayloadTooLarge } from '../../domain/errors/errors.js'

/*
 * Request bodies as the express adapter reads them (express.json() and express.urlencoded({ extended:
 * true }), i.e. body-parser 2), so both engines answer the same bodies with the same data and the same
 * 400/413/415s: docs/wire-protocol.md, Bodies. Fastify reads the bytes (enforcing the limit, after
 * `decompressed`); these decode and parse them.
 */

/** A client error as body-parser raises it: src/interfaces/http/error-response.ts maps it as it maps body-parser's. */
function clientError(status: number, message: string, type: string): Error {
  return Object.assign(new Error(message), { status, expose: true, type })
}

/**
 * The body as sent, before any parsing: `payload` itself, or inflated when `Content-Encoding` is
 * gzip, deflate or br (415 for another encoding, 400 for a body that does not inflate). The stream
 * counts the bytes received in `receivedEncodedLength`, which fastify checks against Content-Length;
 * the limit applies to the inflated body.
 */
export function decompressed(headers: IncomingHttpHeaders, payload: Readable): Readable {
  const encoding = (headers['content-encoding'] ?? 'identity').toLowerCase()
  if (encoding === 'identity') return payload
  const inflate =
    encoding === 'gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined
  if (!inflate) throw clientError(415, `unsupported content encoding "${encoding}"`, 'encoding.unsupported')
  const counted = Object.assign(inflate, { receivedEncodedLength: 0 })
  // Registered first, so the error reaches the parser already marked as the client's (body-parser's 400).
  inflate.on('error', (error) => Object.assign(error, { status: 400, expose: true }))
  payload.on('data', (chunk: Buffer) => {
    counted.receivedEncodedLength += chunk.length
  })
  payload.on('error', (error) => inflate.destroy(error))
  return payload.pipe(counted)
}

/** The `charset` parameter of a Content-Type, lower-cased, or undefined. */
function charsetOf(contentType: string | undefined): string | undefined {
  // Without parameters (`application/json`, the usual header) there is no charset: no regular expression to run.
  if (contentType === undefined || !contentType.includes(';')) return undefined
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType)
  return match?.[1]?.toLowerCase()
}

/** A JSON body's text: any utf-* charset (body-parser reads them with iconv), utf-8 by default; 415 otherwise. */
export function jsonText(body: Buffer, contentType: string | undefined): string {
  const charset = charsetOf(contentType) ?? 'utf-8'
  if (!charset.startsWith('utf-'))
    throw clientError(415, `unsupported charset "${charset.toUpperCase()}"`, 'charset.unsupported')
  return decode(body, charset)
}

/** An urlencoded body's text and charset: utf-8 (default) or iso-8859-1, as body-parser accepts; 415 otherwise. */
export function formText(
  body: Buffer,
  contentType: string | undefined
): { text: string; charset: 'utf-8' | 'iso-8859-1' } {
  const charset = charsetOf(contentType) ?? 'utf-8'
  if (charset !== 'utf-8' && charset !== 'iso-8859-1')
    throw clientError(415, `unsupported charset "${charset.toUpperCase()}"`, 'charset.unsupported')
  return { text: body.toString(charset === 'utf-8' ? 'utf8' : 'latin1'), charset }
}

function decode(body: Buffer, charset: string): string {
  if (charset === 'utf-8') return body.toString('utf8')
  try {
    return new TextDecoder(charset).decode(body)
  } catch {
    throw clientError(415, `unsupported charset "${charset.toUpperCase()}"`, 'charset.unsupported')
  }
}

const UNITS: Record<string, number> = { b: 1, kb: 2 ** 10, mb: 2 ** 20, gb: 2 ** 30, tb: 2 ** 40, pb: 2 ** 50 }

/** '100kb' → 102400, as body-parser's `bytes` reads BODY_LIMIT (1 kb = 1024 bytes; no unit = bytes). */
export function byteLimit(limit: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb|pb)?\s*$/i.exec(limit)
  if (!match) throw new TypeError(`'${limit}' is not a size such as 100kb or 1mb`)
  return Math.floor(Number(match[1]) * UNITS[(match[2] ?? 'b').toLowerCase()]!)
}

/**
 * A JSON body: an object or an array (strict), `{}` when empty. Anything else is a 400 carrying
 * JSON.parse's own message, as body-parser words it.
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) return {}
  const first = firstNonWhitespace(text)
  if (first !== '{' && first !== '[') throw new BadRequest(strictViolation(text, first))
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new BadRequest((error as Error).message)
  }
}

/** The first character that is not JSON whitespace (space, tab, line feed, carriage return), '' when none. */
function firstNonWhitespace(text: string): string {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) return text[index]!
  }
  return ''
}

/** body-parser's message for a scalar body: what JSON.parse says about the first character, quoted from the body. */
function strictViolation(text: string, first: string): string {
  const index = first === '' ? -1 : text.indexOf(first)
  const partial = index < 0 ? '' : text.slice(0, index) + '#'.repeat(text.length - index)
  try {
    JSON.parse(partial)
    return 'Unexpected end of JSON input'
  } catch (error) {
    return (error as Error).message.replace(/#+/g, (placeholder) => text.slice(index, index + placeholder.length))
  }
}

const PARAMETER_LIMIT = 1000
const DEPTH = 32

/**
 * An urlencoded body with qs nesting (every value a string), `{}` when empty. More than 1000
 * parameters is a 413, nesting deeper than 32 a 400 — body-parser's limits and messages.
 */
export function parseFormBody(text: string, charset: 'utf-8' | 'iso-8859-1' = 'utf-8'): Record<string, unknown> {
  if (text.length === 0) return {}
  let count = 0
  for (let index = -1; ;) {
    if (++count > PARAMETER_LIMIT) throw new PayloadTooLarge('too many parameters')
    index = text.indexOf('&', index + 1)
    if (index < 0) break
  }
  try {
    return qs.parse(text, {
      allowPrototypes: true,
      arrayLimit: Math.max(100, count),
      depth: DEPTH,
      parameterLimit: PARAMETER_LIMIT,
      strictDepth: true,
      charset
    })
  } catch (error) {
    if (error instanceof RangeError) throw new BadRequest('The input exceeded the depth')
    throw error
  }
}
