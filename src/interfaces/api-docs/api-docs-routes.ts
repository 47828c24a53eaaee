import type { IncomingMessage, ServerResponse } from 'node:http'
import type serveStatic from 'serve-static'
import { NotFound } from '../../domain/errors/errors.js'
import { respond, type HttpRoute } from '../http/http-extension.js'
import { apiDocsPaths, queryOf, swaggerUiDirectory, type ApiDocsOptions } from './api-docs-page.js'
import { ASYNCAPI_PAGE_PATH, ASYNCAPI_PATH } from './asyncapi-page.js'

const JSON_TYPE = 'application/json; charset=utf-8'
const HTML_TYPE = 'text/html; charset=utf-8'

/** A document or page, built on request, sent with `Cache-Control: no-cache` (services may be added later). */
const fresh =
  (type: string, body: () => string) =>
  (_req: IncomingMessage, res: ServerResponse): void =>
    respond(res, 200, { 'Content-Type': type, 'Cache-Control': 'no-cache' }, body())

/**
 * The API docs (./api-docs-page.ts) as routes of either engine, all quiet (not request-logged): the
 * documents, the pages, and swagger-ui-dist's files through serve-static, from a folder found at the first request.
 */
export function apiDocsRoutes(options: ApiDocsOptions): HttpRoute[] {
  const { specPath, uiPath, init, page, asyncApiPage } = apiDocsPaths(options)
  const route = (path: string, handle: HttpRoute['handle'], prefix = false): HttpRoute => ({
    path,
    prefix,
    quiet: true,
    handle
  })
  const routes = [
    route(
      specPath,
      fresh(JSON_TYPE, () => JSON.stringify(options.document()))
    ),
    route(uiPath, (req, res) => {
      res.setHeader('Location', `${uiPath}/${queryOf(req.url ?? '')}`)
      respond(res, 301, {}, '')
    }),
    route(
      `${uiPath}/`,
      fresh(HTML_TYPE, () => page)
    ),
    route(
      `${uiPath}/index.html`,
      fresh(HTML_TYPE, () => page)
    ),
    route(`${uiPath}/init.js`, (_req, res) =>
      respond(res, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }, init)
    ),
    route(`${uiPath}/`, swaggerUiFiles(uiPath), true)
  ]
  const { asyncApi } = options
  if (asyncApi && asyncApiPage) {
    routes.push(
      route(
        ASYNCAPI_PATH,
        fresh(JSON_TYPE, () => JSON.stringify(asyncApi()))
      ),
      route(
        ASYNCAPI_PAGE_PATH,
        fresh(HTML_TYPE, () => asyncApiPage(asyncApi()))
      )
    )
  }
  return routes
}

/**
 * swagger-ui-dist's bundle, styles and icons under `uiPath`; a file it does not have is the 404 envelope. serve-static
 * (with send, mime-types and http-errors) is imported at the first such request, not at startup: loading it was
 * ~15 % of the server's startup CPU (docs/explanation/performance/rest.md).
 */
function swaggerUiFiles(uiPath: string): HttpRoute['handle'] {
  let files: Promise<ReturnType<typeof serveStatic>> | undefined
  return async (req, res) => {
    files ??= import('serve-static').then(({ default: serve }) =>
      serve(swaggerUiDirectory(), { index: false, maxAge: '1h' })
    )
    const serve = await files
    return new Promise<void>((resolve, reject) => {
      const url = req.url ?? '/'
      res.once('close', resolve)
      // serve-static reads the path from `req.url` as it starts: the part under `uiPath`.
      req.url = url.slice(uiPath.length)
      serve(req, res, (error?: unknown) => reject(error ?? new NotFound('Page not found', { url })))
      req.url = url
    })
  }
}
