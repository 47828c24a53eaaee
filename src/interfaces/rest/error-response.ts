import type { ErrorRequestHandler, Response } from 'express'
import { convertError } from '../../domain/errors/convert-error.js'
import { BadRequest, FeathersError, PayloadTooLarge, errorForCode } from '../../domain/errors/errors.js'
import type { Logger } from '../../domain/logger.js'

/** Errors raised by body-parser/raw-body carry `type`, `status` and `expose` (their messages are safe). */
interface HttpLibraryError { type?: unknown; status?: unknown; expose?: unknown; message: string }

/**
 * Maps anything thrown while answering a request to a framework error: body-parser failures keep
 * their status and message (malformed JSON → 400, oversize → 413); everything else goes through
 * convertError, so unexpected errors become a generic 500 whose details only reach the log.
 */
export function toFeathersError(thrown: unknown, logger: Logger, where: string): FeathersError {
  if (thrown instanceof FeathersError) return thrown
  const candidate = thrown instanceof Error ? (thrown as HttpLibraryError) : undefined
  if (candidate && candidate.expose === true && typeof candidate.status === 'number' && candidate.status < 500) {
    if (candidate.type === 'entity.too.large') return new PayloadTooLarge('request entity too large')
    if (candidate.type === 'entity.parse.failed') return new BadRequest(candidate.message)
    const ErrorType = errorForCode(candidate.status)
    return ErrorType
      ? new ErrorType(candidate.message)
      : new FeathersError('BadRequest', candidate.status, 'bad-request', candidate.message)
  }
  const error = convertError(thrown)
  logger.error(`Unexpected error in ${where}`, { error: describe(thrown) })
  return error
}

export function sendError(res: Response, error: FeathersError): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  const status = error.code >= 400 && error.code < 600 ? error.code : 500
  const body = JSON.stringify(error)
  res.statusCode = status
  const retryAfter = (error.data as { retryAfter?: unknown } | undefined)?.retryAfter
  if (status === 429 && typeof retryAfter === 'number') res.setHeader('Retry-After', String(retryAfter))
  res.setHeader('Content-Type', 'application/json; charset=utf-8')
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.end(body)
}

/** The last middleware: JSON envelope (docs/wire-protocol.md, Errors) for whatever the earlier ones threw. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (thrown, req, res, _next) => {
    sendError(res, toFeathersError(thrown, logger, `${req.method} ${req.originalUrl}`))
  }
}

function describe(thrown: unknown): Record<string, unknown> {
  if (thrown instanceof Error) return { name: thrown.name, message: thrown.message, stack: thrown.stack }
  return { value: String(thrown) }
}
