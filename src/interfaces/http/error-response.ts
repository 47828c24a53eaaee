import { convertError } from '../../domain/errors/convert-error.js'
import { BadRequest, FeathersError, PayloadTooLarge, errorForCode } from '../../domain/errors/errors.js'
import type { Logger } from '../../domain/logger.js'

/**
 * Errors of the HTTP libraries that are the client's fault: body-parser/raw-body's carry `type`,
 * `status` and `expose` (their messages are safe); fastify's carry a `FST_…` `code` and `statusCode`.
 */
interface HttpLibraryError {
  type?: unknown
  status?: unknown
  expose?: unknown
  code?: unknown
  statusCode?: unknown
  message: string
}

/** Both engines' "body too large" answer with Feathers' error and express's message. */
const TOO_LARGE = new Set(['entity.too.large', 'FST_ERR_CTP_BODY_TOO_LARGE'])

/**
 * Maps anything thrown while answering a request to a framework error: body parser failures keep
 * their status and message (malformed JSON → 400, oversize → 413); everything else goes through
 * convertError, so unexpected errors become a generic 500 whose details only reach the log.
 */
export function toFeathersError(thrown: unknown, logger: Logger, where: string): FeathersError {
  if (thrown instanceof FeathersError) return thrown
  // Not `instanceof Error`: errors of node's own streams (zlib) may come from another realm (jest's VM).
  const candidate =
    typeof thrown === 'object' && thrown !== null && typeof (thrown as HttpLibraryError).message === 'string'
      ? (thrown as HttpLibraryError)
      : undefined
  const status = clientStatus(candidate)
  if (candidate && status !== undefined) {
    if (TOO_LARGE.has(String(candidate.type ?? candidate.code))) return new PayloadTooLarge('request entity too large')
    if (candidate.type === 'entity.parse.failed') return new BadRequest(candidate.message)
    const ErrorType = errorForCode(status)
    return ErrorType
      ? new ErrorType(candidate.message)
      : new FeathersError('BadRequest', status, 'bad-request', candidate.message)
  }
  const error = convertError(thrown)
  logger.error(`Unexpected error in ${where}`, { error: describe(thrown) })
  return error
}

/** The 4xx status of a library error whose message may reach the client, or undefined. */
function clientStatus(candidate: HttpLibraryError | undefined): number | undefined {
  if (!candidate) return undefined
  if (candidate.expose === true && typeof candidate.status === 'number' && candidate.status < 500)
    return candidate.status
  const fastify = typeof candidate.code === 'string' && candidate.code.startsWith('FST_')
  if (fastify && typeof candidate.statusCode === 'number' && candidate.statusCode >= 400 && candidate.statusCode < 500)
    return candidate.statusCode
  return undefined
}

/** An error as the wire carries it (docs/wire-protocol.md, Errors): status, headers and the JSON envelope. */
export interface ErrorResponse {
  status: number
  headers: Record<string, string>
  body: string
}

export function errorResponse(error: FeathersError): ErrorResponse {
  const status = error.code >= 400 && error.code < 600 ? error.code : 500
  const body = JSON.stringify(error)
  const headers: Record<string, string> = { 'Content-Type': 'application/json; charset=utf-8' }
  const retryAfter = (error.data as { retryAfter?: unknown } | undefined)?.retryAfter
  if (status === 429 && typeof retryAfter === 'number') headers['Retry-After'] = String(retryAfter)
  return { status, headers, body }
}

function describe(thrown: unknown): Record<string, unknown> {
  if (thrown instanceof Error) return { name: thrown.name, message: thrown.message, stack: thrown.stack }
  return { value: String(thrown) }
}
