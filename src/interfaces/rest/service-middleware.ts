import type { NextFunction, Request, RequestHandler, Response } from 'express'
import type { App, ServiceEntry } from '../../application/app.js'
import { BadRequest, MethodNotAllowed } from '../../domain/errors/errors.js'
import type { Logger } from '../../domain/logger.js'
import { STANDARD_METHODS, type NullableId, type Params } from '../../domain/service/service.js'
import { parseAuthorization } from './authorization-header.js'
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

const STANDARD: ReadonlySet<string> = new Set(STANDARD_METHODS)
const allowCache = new WeakMap<ServiceEntry, string>()

/**
 * docs/wire-protocol.md, REST: one middleware routes every service through `app.lookup` (no express route per
 * service) and runs the call with `app.execute`, so hooks see provider 'rest' and the
 * transport adds nothing else to params.
 */
export function serviceMiddleware(app: App, options: ServiceMiddlewareOptions): RequestHandler {
  const { logger, formatter, bodyParsed } = options
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const url = req.url
    const mark = url.indexOf('?')
    const found = app.lookup(mark < 0 ? url : url.slice(0, mark))
    if (!found) return next()
    const { entry } = found
    const allow = allowHeader(entry)
    res.setHeader('Allow', allow)
    try {
      const id = found.id === undefined ? null : decodeSegment(found.id)
      const method = methodFor(req, id)
      const data = bodyParsed ? (req.body ?? {}) : req.body
      const params: Params = {
        query: parseQueryString(mark < 0 ? '' : url.slice(mark + 1)),
        provider: 'rest',
        headers: req.headers,
        route: decodeRoute(found.route)
      }
      // The peer's address, for login throttling; not enumerable, so hooks see the params they always saw.
      Object.defineProperty(params, 'address', { value: req.socket.remoteAddress, enumerable: false })
      const authentication = parseAuthorization(req.headers.authorization)
      if (authentication) params.authentication = authentication
      const context = await app.execute(entry, method, method === 'find' || method === 'create' || !STANDARD.has(method) ? undefined : id,
        method === 'find' || method === 'get' || method === 'remove' ? undefined : data, params)
      const result = context.dispatch ?? context.result
      const { status, location } = context.http
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
      if (typeof custom !== 'string' || STANDARD.has(custom)) {
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
function allowHeader(entry: ServiceEntry): string {
  let allow = allowCache.get(entry)
  if (allow === undefined) {
    const has = (method: string) => entry.methods.includes(method)
    const verbs: string[] = []
    if (has('find') || has('get')) verbs.push('GET', 'HEAD')
    if (has('create') || entry.methods.some((method) => !STANDARD.has(method))) verbs.push('POST')
    if (has('update')) verbs.push('PUT')
    if (has('patch')) verbs.push('PATCH')
    if (has('remove')) verbs.push('DELETE')
    allowCache.set(entry, (allow = verbs.join(',')))
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
