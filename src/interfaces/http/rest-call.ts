import type { IncomingHttpHeaders } from 'node:http'
import { parseAuthorization, type Gateway, type Target } from '../../application/transport/index.js'
import { BadRequest, MethodNotAllowed } from '../../domain/errors/errors.js'
import { isStandardMethod, layoutOf } from '../../domain/service/method-layout.js'
import type { NullableId, Params, ServiceCall } from '../../domain/service/service.js'
import { parseQueryString } from './query-parser.js'

/*
 * docs/wire-protocol.md, REST, without an HTTP engine: which service a URL names, which method a
 * verb calls, the params a service sees and the status it answers with. The express adapter
 * (src/interfaces/rest) and the fastify one (src/interfaces/fastify) only read requests and write
 * what this module decides.
 */

/** A URL resolved to a service. */
export interface RestRoute {
  readonly target: Target
  /** The `Allow` header: the verbs this service answers. */
  readonly allow: string
  /** The raw query string (after `?`, '' when none). */
  readonly search: string
}

/** What an engine hands over of one request. */
export interface RestRequest {
  /** The HTTP verb. */
  method: string
  headers: IncomingHttpHeaders
  /** The parsed body; undefined when none was parsed. */
  body: unknown
  /** The peer's address, for login throttling. */
  address: string | undefined
  /** The query when the engine already parsed it with parseQueryString; otherwise read from the URL. */
  query?: Record<string, unknown>
}

/** What to answer: a redirect, an empty response, or a result to write (JSON unless a formatter takes it). */
export interface RestOutcome {
  status: number
  /** Answer with a redirect to this location, no body. */
  location?: string
  /** Read your writes: the write's event offset, when it asked for it (the `Plumage-Offset` header). */
  offset?: string
  /** The result; absent (with status 204 unless a hook chose another) when the service returned something falsy. */
  result?: unknown
}

/** The `Allow` header per service, keyed by its methods list (one per registered service). */
const allowCache = new WeakMap<readonly string[], string>()

/** The service `url` (path and query, as received) names, or undefined: the engine goes on (static files, 404). */
export function restRoute(gateway: Gateway, url: string): RestRoute | undefined {
  const mark = url.indexOf('?')
  const target = gateway.resolve(mark < 0 ? url : url.slice(0, mark), { id: true })
  if (!target) return undefined
  return { target, allow: allowHeader(target.methods), search: mark < 0 ? '' : url.slice(mark + 1) }
}

/**
 * Runs the call a request makes through the gateway, so hooks see provider 'rest' and the transport
 * adds nothing else to params, and hands its outcome to `respond` (the engine's writer); resolves
 * with what `respond` returns. Rejects with the call's error, or the writer's (the engine answers
 * with the envelope). `bodyParsed`: without body parsers the body stays undefined and
 * create/update/patch get the 400s of docs/wire-protocol.md, Service calls; with them a missing body
 * is `{}`.
 */
export function restCall<R>(
  gateway: Gateway,
  route: RestRoute,
  request: RestRequest,
  bodyParsed: boolean,
  respond: (outcome: RestOutcome) => R
): Promise<R> {
  let call: ServiceCall
  try {
    call = callFor(route, request, bodyParsed)
  } catch (error) {
    return Promise.reject(error)
  }
  // Decided and written as the call settles: no async function, and no promise of the outcome alone.
  return gateway.callThen(call, ({ result, status, location, offset }) => {
    if (location !== undefined) return respond({ status: status ?? 303, location })
    if (offset) return offset().then((at) => outcome(call, respond, result, status, at))
    return outcome(call, respond, result, status)
  }) as Promise<R>
}

function outcome<R>(call: ServiceCall, respond: (o: RestOutcome) => R, result: unknown, status?: number, at?: string) {
  if (!result) return respond({ status: status ?? 204, offset: at })
  return respond({ status: status ?? (call.method === 'create' ? 201 : 200), result, offset: at })
}

function callFor(route: RestRoute, request: RestRequest, bodyParsed: boolean): ServiceCall {
  const { target } = route
  const id = target.id === undefined ? null : decodeSegment(target.id)
  const method = methodFor(request, id)
  const layout = layoutOf(method)
  const params: Params = new RestParams(
    request.query ?? parseQueryString(route.search),
    request.headers,
    decodeRoute(target.route),
    request.address
  )
  const authentication = parseAuthorization(request.headers.authorization)
  if (authentication) params.authentication = authentication
  return {
    path: target.path,
    method,
    id: layout.id ? id : undefined,
    data: layout.data ? (bodyParsed ? (request.body ?? {}) : request.body) : undefined,
    params
  }
}

/**
 * The params of a REST call: query, provider, headers and route (and authentication when sent) as own
 * properties, and the peer's address, for login throttling, read through a getter: not an own property,
 * so hooks see (and spread) the params they always saw. A class rather than `Object.defineProperty` on
 * a literal: defining the hidden property went through V8's runtime on every request.
 */
class RestParams implements Params {
  [key: string]: unknown
  query: Params['query']
  provider: string
  headers: IncomingHttpHeaders
  route: Record<string, string>
  readonly #address: string | undefined

  constructor(
    query: Params['query'],
    headers: IncomingHttpHeaders,
    route: Record<string, string>,
    address: string | undefined
  ) {
    // In the order the params literal had.
    this.query = query
    this.provider = 'rest'
    this.headers = headers
    this.route = route
    this.#address = address
  }

  get address(): string | undefined {
    return this.#address
  }
}

/** The service method a verb calls (`X-Service-Method` names a custom one on POST). */
export function methodFor(request: Pick<RestRequest, 'method' | 'headers'>, id: NullableId): string {
  switch (request.method) {
    case 'GET':
    case 'HEAD':
      return id === null ? 'find' : 'get'
    case 'POST': {
      const custom = request.headers['x-service-method']
      if (custom === undefined) return 'create'
      if (typeof custom !== 'string' || isStandardMethod(custom)) {
        throw new MethodNotAllowed(`Method \`${String(custom)}\` is not supported by this endpoint.`)
      }
      return custom
    }
    case 'PUT':
      return 'update'
    case 'PATCH':
      return 'patch'
    case 'DELETE':
      return 'remove'
    default:
      throw new MethodNotAllowed(`Method ${request.method} not allowed`)
  }
}

/** The verbs a service answers (v3 sent `Allow` on every service response; harmless for v5). */
export function allowHeader(methods: readonly string[]): string {
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

/**
 * Clients encode ids with encodeURIComponent; hand the service what the caller meant (docs/wire-protocol.md, Paths and
 * ids).
 */
export function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment
  try {
    return decodeURIComponent(segment)
  } catch {
    throw new BadRequest(`The URL segment '${segment}' is not valid percent-encoding`)
  }
}

function decodeRoute(route: Record<string, string>): Record<string, string> {
  // for…in: the route of most services is empty, and Object.keys would allocate an array for it on every request.
  for (const key in route) route[key] = decodeSegment(route[key]!)
  return route
}
