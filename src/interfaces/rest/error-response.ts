import type { ErrorRequestHandler, Response } from 'express'
import type { FeathersError } from '../../domain/errors/errors.js'
import type { Logger } from '../../domain/logger.js'
import { errorResponse, toFeathersError } from '../http/error-response.js'

/** Writes the error envelope (src/interfaces/http/error-response.ts) on an express response. */
export function sendError(res: Response, error: FeathersError): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  const { status, headers, body } = errorResponse(error)
  res.statusCode = status
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.end(body)
}

/** The last middleware: JSON envelope (docs/wire-protocol.md, Errors) for whatever the earlier ones threw. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (thrown, req, res, _next) => {
    sendError(res, toFeathersError(thrown, logger, `${req.method} ${req.originalUrl}`))
  }
}
