import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'
import { createRequire } from 'node:module'
import { createServer, type RequestListener } from 'node:http'
import { resolve } from 'node:path'
import { Gateway, type App } from '../../application/transport/index.js'
import { NotFound } from '../../domain/errors/errors.js'
import { silentLogger } from '../../domain/logger.js'
import type { Logger } from '../../domain/logger.js'
import { errorResponse, toFeathersError } from '../http/error-response.js'
import { healthRoute } from '../http/health.js'
import type { HttpAppOptions, HttpEngine } from '../http/http-engine.js'
import { answer, mountExtensions, pathOf, type MountedExtensions } from '../http/http-extension.js'
import { serve } from '../http/http-server.js'
import { parseQueryString } from '../http/query-parser.js'
import { restCall, restRoute } from '../http/rest-call.js'
import { markRoute } from '../http/service-route.js'
import { byteLimit, decompressed, formText, jsonText, parseFormBody, parseJsonBody } from './bodies.js'

/**
 * A custom response writer: gets the method's result as `data` and either sends it with `reply`
 * (e.g. `reply.type('text/csv').send(…)`) or returns what to send.
 */
export type FastifyFormatter = (request: FastifyRequest, reply: FastifyReply, data: unknown) => unknown

/** The fastify engine's options: the shared ones and its formatter. */
export interface FastifyAppOptions extends HttpAppOptions {
  /** Replaces the default JSON writer for service results. */
  formatter?: FastifyFormatter
}

/**
 * fastify (CommonJS) and its plugins load only when this engine is chosen and an option asks for
 * them: the default express server does not pay for them at startup.
 */
const load = createRequire(import.meta.url)

/** The verbs the express adapter's cors middleware allows by default. */
const CORS_METHODS = 'GET,HEAD,PUT,PATCH,POST,DELETE'

/** The Content-Type of JSON answers, as fastify and express write it. */
const JSON_TYPE = 'application/json; charset=utf-8'

/** Verbs whose body express reads; fastify parses bodies of the others too, so they get no parser here. */
const WITH_BODY = ['POST', 'PUT', 'PATCH', 'QUERY']

/**
 * The HTTP driving adapter on fastify 5: every service of `app` per docs/wire-protocol.md, REST,
 * answering exactly as the express adapter (src/interfaces/rest) does — the mapping itself is
 * src/interfaces/http/rest-call.ts — with CORS, compression, static files and request logging from
 * fastify's own plugins and logger, each off unless configured.
 *
 * One catch-all route resolves services through the gateway (services registered later are found),
 * then falls through to static files and the 404 envelope; `/health` and the extensions' routes
 * (src/interfaces/http/http-extension.ts) are routes of their own, which fastify's router prefers to the catch-all.
 */
export function createFastifyApp(app: App, options: FastifyAppOptions = {}): FastifyInstance {
  const { fastify, LogController } = load('fastify') as typeof import('fastify')
  const logger = options.logger ?? silentLogger
  const gateway = new Gateway(app)
  const extensions = mountExtensions(app, options.extensions, options.health ? [healthRoute(options.health)] : [])
  const http = fastify({
    ...loggerOptions(LogController, options.requestLog),
    bodyLimit: byteLimit(options.bodyLimit ?? '100kb'),
    routerOptions: { querystringParser: parseQueryString, maxParamLength: 8192 },
    // Malformed percent-encoding in the path: answered like any other request (400 for an id, else 404).
    frameworkErrors: (_error, request, reply) => {
      Promise.resolve()
        .then(() => notFound(request, reply))
        .catch((thrown: unknown) => fail(thrown, request, reply))
    },
    return503OnClosing: false,
    // Extensions that wrap the request listener (tracing: a span per request) wrap fastify's own handling.
    ...(extensions.wraps ? { serverFactory: (handler: RequestListener) => createServer(extensions.wrap(handler)) } : {})
  })
  extensions.attach(http.server)
  const fail = (thrown: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const { status, headers, body } = errorResponse(
      toFeathersError(thrown, logger, `${request.method} ${pathOf(request.url)}`)
    )
    return reply.code(status).headers(headers).send(body)
  }
  http.setErrorHandler(fail)
  http.setNotFoundHandler((request, reply) => notFound(request, reply))
  if (options.staticDir) {
    // Only `reply.sendFile`: static files are what the catch-all route finds no service for.
    // A relative folder is read from the current directory, as express.static reads it.
    const root = resolve(options.staticDir)
    http.register(import('@fastify/static'), { root, serve: false, dotfiles: 'ignore', redirect: true })
  }
  // As on express, health and the extensions' quiet routes come before request logs, CORS and compression.
  extensionRoutes(http, extensions, logger)
  const services = serviceHandler(gateway, options, extensions.marksServiceRoutes, notFound)
  http.register(async (scope) => {
    const origins = options.corsOrigins ?? []
    if (origins.length > 0) {
      // Like the cors middleware: every OPTIONS is a preflight, answered 204 before the services.
      await scope.register(import('@fastify/cors'), {
        origin: origins.includes('*') ? true : origins,
        credentials: true,
        exposedHeaders: ['Plumage-Offset'],
        strictPreflight: false,
        methods: CORS_METHODS
      })
    }
    if (options.compression) await scope.register(import('@fastify/compress'), { global: true, threshold: 1024 })
    const methods = http.supportedMethods.filter((method) => !(method === 'OPTIONS' && origins.length > 0))
    scope.register(async (bodies) => {
      bodyParsers(bodies, options.bodyParsers ?? true)
      bodies.route({ method: methods.filter((method) => WITH_BODY.includes(method)), url: '/*', handler: services })
    })
    scope.register(async (bodiless) => {
      bodyParsers(bodiless, false)
      bodiless.route({ method: methods.filter((method) => !WITH_BODY.includes(method)), url: '/*', handler: services })
    })
  })
  return http

  /** No service here: a static file for GET/HEAD when configured, else the 404 envelope. */
  function notFound(request: FastifyRequest, reply: FastifyReply): unknown {
    const route = restRoute(gateway, request.url)
    // Verbs fastify has no route for (PROPFIND…) still get the service's 405.
    if (route) return services.call(http, request, reply)
    const error = new NotFound('Page not found', { url: request.url })
    const { status, headers, body } = errorResponse(error)
    return reply.code(status).headers(headers).send(body)
  }
}

/** `/health` and the extensions' routes, on node's request and response (the same answers as on express). */
function extensionRoutes(http: FastifyInstance, extensions: MountedExtensions, logger: Logger): void {
  for (const route of extensions.routes) {
    http.route({
      method: ['GET', 'HEAD'],
      url: route.prefix ? `${route.path}*` : route.path,
      ...(route.quiet ? { logLevel: 'silent' } : {}),
      handler: (request, reply) => {
        reply.hijack()
        return answer(route, request.raw, reply.raw, logger)
      }
    })
  }
}

/** The handler of the catch-all route: the service the URL names, or static files, or 404. */
function serviceHandler(
  gateway: Gateway,
  options: FastifyAppOptions,
  measured: boolean,
  notFound: (request: FastifyRequest, reply: FastifyReply) => unknown
) {
  const { formatter, staticDir } = options
  const bodyParsed = options.bodyParsers ?? true
  // Not an async function: the handler hands fastify the promise of restCall's answer, one promise less per request.
  return function services(request: FastifyRequest, reply: FastifyReply): unknown {
    const route = restRoute(gateway, request.url)
    if (!route) {
      if (staticDir && (request.method === 'GET' || request.method === 'HEAD')) return sendStatic(request, reply)
      return notFound(request, reply)
    }
    if (measured) markRoute(reply.raw, route.target)
    reply.header('Allow', route.allow)
    const input = {
      method: request.method,
      headers: request.headers,
      body: request.body,
      address: request.socket.remoteAddress,
      query: request.query as Record<string, unknown>
    }
    return restCall(gateway, route, input, bodyParsed, ({ status, location, result, offset }) => {
      reply.code(status)
      if (offset !== undefined) reply.header('Plumage-Offset', offset)
      if (location !== undefined) reply.header('Location', location).send()
      else if (result === undefined) reply.send()
      else if (formatter) {
        const payload = formatter(request, reply, result)
        if (!reply.sent) reply.send(payload)
      }
      // `type` sets the header fastify's own JSON replies carry, without `header`'s lower-casing of the name.
      else reply.type(JSON_TYPE).send(JSON.stringify(result))
      // A reply is a thenable that fastify waits on: handed back only while it is still being sent (async onSend
      // hooks, e.g. compression), since resolving a promise with a thenable costs another turn of the microtask queue.
      return reply.sent ? undefined : reply
    })
  }

  function sendStatic(request: FastifyRequest, reply: FastifyReply): unknown {
    let path: string
    try {
      path = decodeURIComponent(pathOf(request.url))
    } catch {
      return notFound(request, reply)
    }
    return (reply as FastifyReply & { sendFile(path: string): FastifyReply }).sendFile(path)
  }
}

/**
 * JSON and urlencoded bodies as express reads them (./bodies.ts), within BODY_LIMIT; any other
 * content type leaves the body undefined (the service gets `{}`), as express does.
 */
function bodyParsers(scope: FastifyInstance, parse: boolean): void {
  scope.removeAllContentTypeParsers()
  if (parse) {
    // Inflated only for the types body-parser reads: other bodies are never looked at.
    scope.addHook('preParsing', (request, _reply, payload, done) => {
      if (request.headers['content-encoding'] === undefined || !PARSED.test(request.headers['content-type'] ?? ''))
        return done(null, payload)
      try {
        done(null, decompressed(request.headers, payload))
      } catch (error) {
        done(error as Error)
      }
    })
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      try {
        done(null, parseJsonBody(jsonText(body as Buffer, request.headers['content-type'])))
      } catch (error) {
        done(error as Error, undefined)
      }
    })
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (request, body, done) => {
      try {
        const { text, charset } = formText(body as Buffer, request.headers['content-type'])
        done(null, parseFormBody(text, charset))
      } catch (error) {
        done(error as Error, undefined)
      }
    })
  }
  scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined))
}

/** The content types the parsers above read. */
const PARSED = /^\s*application\/(json|x-www-form-urlencoded)\s*(;|$)/i

type LogControllerClass = typeof import('fastify').LogController

/**
 * No logger unless request logs are asked for; then the app's pino, or fastify's own on stdout, with
 * one line per request when it completed, as pino-http writes it (fastify's default is two lines).
 */
function loggerOptions(
  LogController: LogControllerClass,
  requestLog: HttpAppOptions['requestLog']
): Pick<FastifyServerOptions, 'logger' | 'loggerInstance' | 'logController'> {
  if (!requestLog) return { logger: false }
  class OneLinePerRequest extends LogController {
    override incomingRequest(): void {}
    override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
      const line = { req: request, res: reply, responseTime: reply.elapsedTime }
      if (error) reply.log.error({ ...line, err: error }, 'request errored')
      else reply.log.info(line, 'request completed')
    }
  }
  return {
    ...(requestLog === true ? { logger: true } : { loggerInstance: requestLog }),
    logController: new OneLinePerRequest()
  }
}

/** The fastify engine (src/interfaces/http/http-engine.ts): listens on fastify's own node server. */
export function fastifyEngine(app: App, options: FastifyAppOptions = {}): HttpEngine {
  const http = createFastifyApp(app, options)
  return {
    server: http.server,
    async listen(port, host) {
      await http.ready()
      const running = await serve(http.server, port, host)
      return {
        ...running,
        close: async () => {
          await running.close()
          await http.close()
        }
      }
    }
  }
}
