import type { NextFunction, Request, RequestHandler, Response } from 'express'
import { parseAuthorization, type Gateway } from '../../application/transport/index.js'
import { BadRequest, MethodNotAllowed } from '../../domain/errors/errors.js'
import type { Logger } from '../../domain/logger.js'
import { isStandardMethod, layoutOf } from '../../domain/service/method-layout.js'
import type { NullableId, Params } from '../../domain/service/service.js'
import { sendError, toFeathersError } from './error-response.js'
import { parseQueryString } from './query-parser.js'

/** A custom response writer: reads the method's result from `res.data`, may use `res.format`. */
export type Formatter = (req: Request, res: Response & { data?: unknown }) => void

export interface ServiceMiddlewareOptions {
  logger: Logger
  formatter?: Formatter
  /** Without body parsers `req.body` stays undefined and create/update/patch get the 400s of docs/wire-protocol.md, Service calls. */
  bodyParsed: boolean
}

/** The `Allow` header per service, keyed by its methods list (one per registered service). */
const allowCache = new WeakMap<readonly string[], string>()

/**
 * docs/wire-protocol.md, REST: one middleware routes every service through the gateway (no express
 * route per service) and runs the call there, so hooks see provider 'rest' and the transport adds
 * nothing else to params.
 */
export function serviceMiddleware(gateway: Gateway, options: ServiceMiddlewareOptions): RequestHandler {
  const { logger, formatter, bodyParsed } = options
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const url = req.url
    const mark = url.indexOf('?')
    const target = gateway.resolve(mark < 0 ? url : url.slice(0, mark), { id: true })
    if (!target) return next()
    res.setHeader('Allow', allowHeader(target.methods))
    try {
      const id = target.id === undefined ? null : decodeSegment(target.id)
      const method = methodFor(req, id)
      const layout = layoutOf(method)
      const params: Params = {
        query: parseQueryString(mark < 0 ? '' : url.slice(mark + 1)),
        provider: 'rest',
        headers: req.headers,
        route: decodeRoute(target.route)
      }
      // The peer's address, for login throttling; not enumerable, so hooks see the params they always saw.
      Object.defineProperty(params, 'address', { value: req.socket.remoteAddress, enumerable: false })
      const authentication = parseAuthorization(req.headers.authorization)
      if (authentication) params.authentication = authentication
      const { result, status, location } = await gateway.call({
        path: target.path,
        method,
        id: layout.id ? id : undefined,
        data: layout.data ? (bodyParsed ? (req.body ?? {}) : req.body) : undefined,
        params
      })
      if (location !== undefined) {
        res.statusCode = status ?? 303
        res.setHeader('Location', location)
        res.end()
      } else if (!result) {
        res.statusCode = status ?? 204
        res.end()
      } else if (formatter) {
        res.status(status ?? (method === 'create' ? 201 : 200))
        ;(res as Response & { data?: unknown }).data = result
        formatter(req, res)
      } else {
        const body = JSON.stringify(result)
        res.statusCode = status ?? (method === 'create' ? 201 : 200)
        res.setHeader('Content-Type', 'application/json; charset=utf-8')
        res.setHeader('Content-Length', Buffer.byteLength(body))
        res.end(body)
      }
    } catch (thrown) {
      sendError(res, toFeathersError(thrown, logger, `${req.method} ${req.path}`))
    }
  }
}

function methodFor(req: Request, id: NullableId): string {
  switch (req.method) {
    case 'GET': case 'HEAD': return id === null ? 'find' : 'get'
    case 'POST': {
      const custom = req.headers['x-service-method']
      if (custom === undefined) return 'create'
      if (typeof custom !== 'string' || isStandardMethod(custom)) {
        throw new MethodNotAllowed(`Method \`${String(custom)}\` is not supported by this endpoint.`)
      }
      return custom
    }
    case 'PUT': return 'update'
    case 'PATCH': return 'patch'
    case 'DELETE': return 'remove'
    default: throw new MethodNotAllowed(`Method ${req.method} not allowed`)
  }
}

/** The verbs a service answers (v3 sent `Allow` on every service response; harmless for v5). */
function allowHeader(methods: readonly string[]): string {
  let allow = allowCache.get(methods)
  if (allow === undefined) {
    const has = (method: string) => methods.includes(method)
    const verbs: string[] = []
    if (has('find') || has('get')) verbs.push('GET', 'HEAD')
    if (has('create') || methods.some((method) => !isStandardMethod(method))) verbs.push('POST')
    if (has('update')) verbs.push('PUT')
    if (has('patch')) verbs.push('PATCH')
    if (has('remove')) verbs.push('DELETE')
    allow = verbs.join(',')
    allowCache.set(methods, allow)
  }
  return allow
}

/** Clients encode ids with encodeURIComponent; hand the service what the caller meant (docs/wire-protocol.md, Paths and ids). */
function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment
  try {
    return decodeURIComponent(segment)
  } catch {
    throw new BadRequest(`The URL segment '${segment}' is not valid percent-encoding`)
  }
}

function decodeRoute(route: Record<string, string>): Record<string, string> {
  for (const key of Object.keys(route)) route[key] = decodeSegment(route[key]!)
  return route
}
