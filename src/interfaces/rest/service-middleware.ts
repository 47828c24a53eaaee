import type { NextFunction, Request, RequestHandler, Response } from 'express'
import type { Gateway } from '../../application/transport/index.js'
import type { Logger } from '../../domain/logger.js'
import { toFeathersError } from '../http/error-response.js'
import { restCall, restRoute } from '../http/rest-call.js'
import { markRoute } from '../http/service-route.js'
import { sendError } from './error-response.js'

/** A custom response writer: reads the method's result from `res.data`, may use `res.format`. */
export type Formatter = (req: Request, res: Response & { data?: unknown }) => void

export interface ServiceMiddlewareOptions {
  logger: Logger
  formatter?: Formatter
  /** Whether an extension (request metrics) reads the route each response is marked with. */
  measured: boolean
  /**
   * Without body parsers `req.body` stays undefined and create/update/patch get the 400s of docs/wire-protocol.md,
   * Service calls.
   */
  bodyParsed: boolean
}

/**
 * docs/wire-protocol.md, REST: one middleware routes every service through the gateway (no express
 * route per service); src/interfaces/http/rest-call.ts decides the call and the status, this writes them.
 */
export function serviceMiddleware(gateway: Gateway, options: ServiceMiddlewareOptions): RequestHandler {
  const { logger, formatter, bodyParsed, measured } = options
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const route = restRoute(gateway, req.url)
    if (!route) return next()
    if (measured) markRoute(res, route.target)
    res.setHeader('Allow', route.allow)
    try {
      const request = {
        method: req.method,
        headers: req.headers,
        body: req.body as unknown,
        address: req.socket.remoteAddress
      }
      await restCall(gateway, route, request, bodyParsed, ({ status, location, result, offset }) => {
        res.statusCode = status
        if (offset !== undefined) res.setHeader('Plumage-Offset', offset)
        if (location !== undefined) {
          res.setHeader('Location', location)
          res.end()
        } else if (result === undefined) {
          res.end()
        } else if (formatter) {
          ;(res as Response & { data?: unknown }).data = result
          formatter(req, res)
        } else {
          const body = JSON.stringify(result)
          res.setHeader('Content-Type', 'application/json; charset=utf-8')
          res.setHeader('Content-Length', Buffer.byteLength(body))
          res.end(body)
        }
      })
    } catch (thrown) {
      sendError(res, toFeathersError(thrown, logger, `${req.method} ${req.path}`))
    }
  }
}
